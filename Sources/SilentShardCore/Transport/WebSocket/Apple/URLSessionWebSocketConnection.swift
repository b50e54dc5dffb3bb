// Compiled on Apple platforms, and on Linux under SILENTSHARD_TYPECHECK_APPLE (scripts/check-apple-typecheck:
// type-checked against FoundationNetworking, never linked into a Linux product; docs/apple.md).
#if canImport(Darwin) || SILENTSHARD_TYPECHECK_APPLE
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif


/// ``WebSocketConnection`` over `URLSessionWebSocketTask`. The `URLSession` (and its delegate,
/// this object) is created on open and invalidated on close, so nothing outlives the connection.
///
/// Read timeouts: a `receive` still pending when `read()` times out keeps running; its message is
/// kept for the next `read()` (no message is lost).
final class URLSessionWebSocketConnection: NSObject, WebSocketConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
    private let endpoint: NetworkEndpoint
    private let subprotocol: String
    private let settings: WebSocketSettings

    // Guarded by `lock`.
    private let lock = NSLock()
    private var session: URLSession?
    private var task: URLSessionWebSocketTask?
    private var openContinuation: CheckedContinuation<Void, any Error>?
    private var openTimedOut = false
    private var closeContinuation: CheckedContinuation<Void, Never>?
    private var completed = false
    private var peerClose: NetworkError?
    private var receiveInFlight = false
    private var stash: [Result<URLSessionWebSocketTask.Message, any Error>] = []
    private var waiter: (id: Int, continuation: CheckedContinuation<WebSocketMessage, any Error>)?
    private var nextID = 0

    private init(endpoint: NetworkEndpoint, subprotocol: String, settings: WebSocketSettings) {
        self.endpoint = endpoint
        self.subprotocol = subprotocol
        self.settings = settings
    }

    static func open(endpoint: NetworkEndpoint, subprotocol: String, settings: WebSocketSettings) async throws -> URLSessionWebSocketConnection {
        let connection = URLSessionWebSocketConnection(endpoint: endpoint, subprotocol: subprotocol, settings: settings)
        do {
            try await connection.start()
        } catch {
            connection.invalidate()
            throw error
        }
        return connection
    }

    private func start() async throws {
        let configuration = URLSessionConfiguration.silentShardEphemeral()
        // Our own timers enforce the connect and read timeouts; keep URLSession's out of the way.
        configuration.timeoutIntervalForRequest = max(settings.connectTimeout, settings.readTimeout).timeInterval + 30
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        let task: URLSessionWebSocketTask
        if settings.headers.isEmpty {
            task = session.webSocketTask(with: endpoint.url, protocols: subprotocol.isEmpty ? [] : [subprotocol])
        } else {
            // Extra fields need a request; the subprotocol is then offered through its header.
            var request = URLRequest(url: endpoint.url)
            if !subprotocol.isEmpty { request.setValue(subprotocol, forHTTPHeaderField: "Sec-WebSocket-Protocol") }
            for field in settings.headers { request.setValue(field.value, forHTTPHeaderField: field.name) }
            task = session.webSocketTask(with: request)
        }
        task.maximumMessageSize = settings.maximumMessageSize
        lock.withLock {
            self.session = session
            self.task = task
        }
        let timer = Task { [weak self] in
            try await Task.sleep(for: self?.settings.connectTimeout ?? .zero)
            self?.failOpen(NetworkError.timeout)
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                lock.withLock { openContinuation = continuation }
                task.resume()
            }
        } onCancel: {
            failOpen(CancellationError())
        }
    }

    /// Fails a pending open (timeout or cancellation) and cancels the task.
    private func failOpen(_ error: any Error) {
        let (continuation, task) = lock.withLock { () -> (CheckedContinuation<Void, any Error>?, URLSessionWebSocketTask?) in
            let pending = openContinuation
            openContinuation = nil
            return (pending, self.task)
        }
        guard let continuation else { return }
        task?.cancel()
        continuation.resume(throwing: error)
    }

    // MARK: WebSocketConnection

    func send(_ message: WebSocketMessage) async throws {
        guard let task = lock.withLock({ completed ? nil : self.task }) else { throw terminalError() }
        guard message.data.count <= settings.maximumMessageSize else {
            throw NetworkError.messageTooLarge(limit: settings.maximumMessageSize)
        }
        do {
            switch message {
            case .text(let text): try await task.send(.string(text))
            case .binary(let data): try await task.send(.data(data))
            }
        } catch {
            throw mapped(error)
        }
    }

    func receive() async throws -> WebSocketMessage {
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        let timer = Task { [weak self, readTimeout = settings.readTimeout] in
            try await Task.sleep(for: readTimeout)
            self?.failWaiter(id: id, with: NetworkError.timeout)
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketMessage, any Error>) in
                let (ready, startReceive) = lock.withLock { () -> (Result<URLSessionWebSocketTask.Message, any Error>?, URLSessionWebSocketTask?) in
                    if Task.isCancelled { return (.failure(CancellationError()), nil) }
                    if !stash.isEmpty { return (stash.removeFirst(), nil) }
                    // After a peer's close the task still hands out the messages that preceded it
                    // (a node sends its final frame before closing); only a released task is empty.
                    guard self.task != nil || receiveInFlight else {
                        return (.failure(peerClose ?? NetworkError.notConnected), nil)
                    }
                    waiter = (id, continuation)
                    guard !receiveInFlight, let task else { return (nil, nil) }
                    receiveInFlight = true
                    return (nil, task)
                }
                if let ready { continuation.resume(with: convert(ready)) }
                startReceive?.receive { [weak self] result in self?.received(result) }
            }
        } onCancel: {
            failWaiter(id: id, with: CancellationError())
        }
    }

    func close() async {
        let task = lock.withLock { completed ? nil : self.task }
        if let task {
            let timer = Task { [weak self, closeTimeout = settings.closeTimeout] in
                try await Task.sleep(for: closeTimeout)
                self?.finishClose()
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = lock.withLock { () -> Bool in
                    if completed { return true }
                    closeContinuation = continuation
                    return false
                }
                if done { continuation.resume() } else { task.cancel(with: .normalClosure, reason: nil) }
            }
            timer.cancel()
        }
        invalidate()
    }

    // MARK: Internals

    private func received(_ result: Result<URLSessionWebSocketTask.Message, any Error>) {
        let current = lock.withLock { () -> CheckedContinuation<WebSocketMessage, any Error>? in
            receiveInFlight = false
            guard let pending = waiter else {
                stash.append(result)
                return nil
            }
            waiter = nil
            return pending.continuation
        }
        current?.resume(with: convert(result))
    }

    private func failWaiter(id: Int, with error: any Error) {
        let current = lock.withLock { () -> CheckedContinuation<WebSocketMessage, any Error>? in
            guard let pending = waiter, pending.id == id else { return nil }
            waiter = nil
            return pending.continuation
        }
        current?.resume(throwing: error)
    }

    private func convert(_ result: Result<URLSessionWebSocketTask.Message, any Error>) -> Result<WebSocketMessage, any Error> {
        switch result {
        case .success(.string(let text)): return .success(.text(text))
        case .success(.data(let data)): return .success(.binary(data))
        case .success: return .failure(NetworkError.protocolViolation(closeCode: 1003))
        case .failure(let error): return .failure(mapped(error))
        }
    }

    private func mapped(_ error: any Error) -> any Error {
        if let close = lock.withLock({ peerClose }) { return close }
        if let task = lock.withLock({ self.task }), task.closeCode != .invalid {
            let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? ""
            return NetworkError.closedByPeer(code: task.closeCode.rawValue, reason: reason)
        }
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain && nsError.code == Int(EMSGSIZE) {
            return NetworkError.messageTooLarge(limit: settings.maximumMessageSize)
        }
        return URLSessionErrorMapping.map(error, endpoint: endpoint, response: nil)
    }

    private func terminalError() -> NetworkError {
        lock.withLock { peerClose } ?? .notConnected
    }

    private func finishClose() {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            completed = true
            defer { closeContinuation = nil }
            return closeContinuation
        }
        continuation?.resume()
    }

    /// Cancels the task and invalidates the session (which releases its strong reference to us).
    private func invalidate() {
        let (session, task) = lock.withLock { () -> (URLSession?, URLSessionWebSocketTask?) in
            defer {
                self.session = nil
                self.task = nil
                completed = true
            }
            return (self.session, self.task)
        }
        task?.cancel()
        session?.invalidateAndCancel()
    }

    // MARK: URLSessionWebSocketDelegate

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol selected: String?) {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
            defer { openContinuation = nil }
            return openContinuation
        }
        let expected: String? = subprotocol.isEmpty ? nil : subprotocol
        if selected == expected || (expected == nil && selected?.isEmpty == true) {
            continuation?.resume()
        } else {
            webSocketTask.cancel(with: .protocolError, reason: nil)
            continuation?.resume(throwing: NetworkError.subprotocolMismatch(offered: subprotocol, selected: selected))
        }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        let text = reason.map { String(decoding: $0, as: UTF8.self) } ?? ""
        lock.withLock {
            if peerClose == nil { peerClose = .closedByPeer(code: closeCode.rawValue, reason: text) }
        }
        finishClose()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, any Error>? in
            defer { openContinuation = nil }
            return openContinuation
        }
        let failure = URLSessionErrorMapping.map(error ?? NetworkError.connectionLost, endpoint: endpoint, response: task.response)
        continuation?.resume(throwing: failure)
        finishClose()
    }

    // The async form of the challenge callback: no completion-handler Sendable annotations to match.
    func urlSession(_ session: URLSession, task: URLSessionTask,
                    didReceive challenge: URLAuthenticationChallenge) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        ServerTrust.evaluate(challenge, trustedRoots: settings.trustedRootCertificates)
    }
}
#endif
