#if !canImport(Darwin)
import Foundation
import Glibc

/// RFC 6455 client over POSIX sockets and OpenSSL. This file: the async side (mailbox); the I/O
/// thread's loop is in `POSIXWebSocketConnection+IOLoop.swift`. Members are internal only so the
/// two files can share them; nothing outside this type touches them.
///
/// One I/O thread per connection owns the socket and the `SSL*` for its whole life: it connects,
/// performs the upgrade, then loops on `poll` (socket + `eventfd`) writing queued frames, reading
/// and decoding, answering pings and running the closing handshake. Async callers only touch the
/// lock-protected mailbox below and wake the thread through the `eventfd`. The thread exits, closing
/// everything, when the connection ends; nothing stays behind after `close()` returns.
final class POSIXWebSocketConnection: WebSocketConnection, @unchecked Sendable {
    struct PendingSend {
        var id: Int
        var frames: [[UInt8]]
        var continuation: CheckedContinuation<Void, any Error>
        /// `readTimeout` also bounds how long a send may wait for the peer to take the bytes.
        var deadline: ContinuousClock.Instant
    }

    struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<WebSocketMessage, any Error>
        var deadline: ContinuousClock.Instant
    }

    /// Data frames are at most this large on the wire, so pongs and close frames can interleave.
    static let fragmentSize = 1 << 20

    let endpoint: NetworkEndpoint
    let subprotocol: String
    let settings: WebSocketSettings
    let signal: WakeSignal

    // MARK: Mailbox (guarded by `lock`)
    let lock = NSLock()
    var nextID = 0
    var pendingSends: [PendingSend] = []
    var inflightSendIDs: Set<Int> = []
    var closeRequests: [CheckedContinuation<Void, Never>] = []
    var inbox: [WebSocketMessage] = []
    var inboxBytes = 0
    var waiter: Waiter?
    /// Why the connection ended (set once); reads fail with it after the inbox is drained.
    var terminal: NetworkError?
    var abortRequested = false
    var finished = false
    /// `close()` callers the I/O thread took over (touched by that thread only); resumed last.
    var ioCloseWaiters: [CheckedContinuation<Void, Never>] = []

    init(endpoint: NetworkEndpoint, subprotocol: String, settings: WebSocketSettings, signal: WakeSignal) {
        self.endpoint = endpoint
        self.subprotocol = subprotocol
        self.settings = settings
        self.signal = signal
    }

    /// Connects, upgrades and starts the I/O thread.
    static func open(endpoint: NetworkEndpoint, subprotocol: String, settings: WebSocketSettings) async throws -> POSIXWebSocketConnection {
        let connection = POSIXWebSocketConnection(endpoint: endpoint, subprotocol: subprotocol, settings: settings, signal: try WakeSignal())
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let thread = Thread {
                    nameThisThread("SilentShard.WS")
                    connection.run(connected: continuation)
                }
                thread.start()
            }
        } onCancel: {
            connection.signal.cancel()
        }
        return connection
    }

    // MARK: WebSocketConnection

    func send(_ message: WebSocketMessage) async throws {
        let payload = message.data
        guard payload.count <= settings.maximumMessageSize else {
            throw NetworkError.messageTooLarge(limit: settings.maximumMessageSize)
        }
        let opcode: WebSocketOpcode
        switch message {
        case .text: opcode = .text
        case .binary: opcode = .binary
        }
        var generator = SystemRandomNumberGenerator()
        let frames = payload.withUnsafeBytes {
            WebSocketFrameEncoder.message(opcode: opcode, payload: $0, fragmentSize: Self.fragmentSize) {
                generator.next()
            }
        }
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let failure: (any Error)? = lock.withLock {
                    if Task.isCancelled { return CancellationError() }
                    if let terminal { return terminal }
                    if finished { return NetworkError.notConnected }
                    pendingSends.append(PendingSend(id: id, frames: frames, continuation: continuation,
                                                    deadline: .now + settings.readTimeout))
                    return nil
                }
                if let failure {
                    continuation.resume(throwing: failure)
                } else {
                    signal.wake()
                }
            }
        } onCancel: {
            let queued: PendingSend? = lock.withLock {
                if let index = pendingSends.firstIndex(where: { $0.id == id }) {
                    return pendingSends.remove(at: index)
                }
                if inflightSendIDs.contains(id) { abortRequested = true }
                return nil
            }
            queued?.continuation.resume(throwing: CancellationError())
            signal.wake()
        }
    }

    func receive() async throws -> WebSocketMessage {
        let id = lock.withLock { () -> Int in
            nextID += 1
            return nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketMessage, any Error>) in
                let outcome: Result<WebSocketMessage, any Error>? = lock.withLock {
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if !inbox.isEmpty {
                        let message = inbox.removeFirst()
                        inboxBytes -= message.data.count
                        return .success(message)
                    }
                    if let terminal { return .failure(terminal) }
                    if finished { return .failure(NetworkError.notConnected) }
                    waiter = Waiter(id: id, continuation: continuation, deadline: .now + settings.readTimeout)
                    return nil
                }
                // Wake the thread: it re-arms its poll timeout for the new deadline, or resumes
                // reading now that the inbox has room.
                signal.wake()
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let cancelled: Waiter? = lock.withLock {
                guard let current = waiter, current.id == id else { return nil }
                waiter = nil
                return current
            }
            cancelled?.continuation.resume(throwing: CancellationError())
        }
    }

    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = lock.withLock { () -> Bool in
                if finished { return true }
                closeRequests.append(continuation)
                return false
            }
            if done { continuation.resume() } else { signal.wake() }
        }
    }

    // MARK: Mailbox operations of the I/O thread

    func isInboxFull() -> Bool {
        lock.withLock { inbox.count >= 64 || inboxBytes > 2 * settings.maximumMessageSize }
    }

    func setTerminal(_ error: NetworkError) {
        let failed: Waiter? = lock.withLock {
            if terminal == nil { terminal = error }
            guard inbox.isEmpty, let current = waiter else { return nil }
            waiter = nil
            return current
        }
        failed?.continuation.resume(throwing: error)
    }

    func deliver(_ message: WebSocketMessage) {
        let receiver: Waiter? = lock.withLock {
            if let current = waiter {
                waiter = nil
                return current
            }
            inbox.append(message)
            inboxBytes += message.data.count
            return nil
        }
        receiver?.continuation.resume(returning: message)
    }

    /// Marks the connection finished and fails everything still waiting.
    func finish(error: NetworkError) {
        let (sends, closes, reader) = lock.withLock { () -> ([PendingSend], [CheckedContinuation<Void, Never>], Waiter?) in
            finished = true
            if terminal == nil { terminal = error }
            let sends = pendingSends
            pendingSends = []
            inflightSendIDs = []
            let closes = closeRequests
            closeRequests = []
            let reader = inbox.isEmpty ? waiter : nil
            if reader != nil { waiter = nil }
            return (sends, closes, reader)
        }
        signal.close()
        let reason = lock.withLock { terminal } ?? error
        for send in sends { send.continuation.resume(throwing: reason) }
        reader?.continuation.resume(throwing: reason)
        for close in closes + ioCloseWaiters { close.resume() }
        ioCloseWaiters = []
    }
}
#endif
