import MPCCrypto
import SilentShardCore
import Foundation

/// One WebSocket connection as the Swift side sees it. Thread-safe; every libwebsockets call it
/// causes is queued to the service thread.
package final class NodeConnection: Sendable {
    /// A message as received.
    struct Message: Sendable {
        var data: Data
        var binary: Bool
    }

    private struct Waiter: Sendable {
        var id: UInt64
        var continuation: CheckedContinuation<Message, any Error>
    }

    private struct State: Sendable {
        var inbox: [Message] = []
        var waiter: Waiter?
        var nextWaiterID: UInt64 = 0
        var closed = false
        var closeCode: UInt16?
        /// Receiving is paused (the inbox reached `pauseThreshold`, or the first message arrived before
        /// authentication) until the reader catches up and the connection is authenticated.
        var paused = false
        /// The token (or the link's LINK_OPEN) was accepted: until then at most one message of at most
        /// `firstMessageLimit` bytes is read from the socket (security review finding 6).
        var authenticated = false
    }

    /// The largest first message read before the connection is authenticated: the token limit
    /// (`BearerToken.maximumByteCount`, session.md §2.1) for the token or a token-less first binary
    /// message; twice that on the inter-node link, whose LINK_OPEN carries the app's token besides A's
    /// certificate and signature.
    var firstMessageLimit: Int { route.mode == .peer ? 2 * BearerToken.maximumByteCount : BearerToken.maximumByteCount }

    /// Process-unique id (for the service thread's table and logs).
    let id: UInt64
    /// The route the connection was opened on.
    package let route: NodeRoute
    /// The `params` query value, if any (untrusted).
    package let params: String?
    /// The client's address as the rate limits count it (session.md §9.5; the forwarded one behind a trusted proxy).
    package let clientAddress: String
    private let engine: LWSEngine
    private let state = LockedValue(State())
    /// How long `read()` waits for a message (the per-step idle timeout); nil: forever.
    let idleTimeout: Duration?

    init(id: UInt64, route: NodeRoute, params: String?, clientAddress: String, engine: LWSEngine, idleTimeout: Duration?,
         authenticated: Bool = false) {
        state.withLock { $0.authenticated = authenticated }
        self.id = id
        self.route = route
        self.params = params
        self.clientAddress = clientAddress
        self.engine = engine
        self.idleTimeout = idleTimeout
    }

    /// Inbox length at which the service thread stops reading from the socket (backpressure on the peer).
    static let pauseThreshold = 4

    /// The next binary message. A text message here (after the token) closes the connection with
    /// 1002 (session.md §2.1).
    /// - Throws: ``NodeServerError/timeout`` after the idle timeout (the connection stays open),
    ///   ``NodeServerError/connectionClosed(code:)``, ``NodeServerError/unexpectedText``.
    package func read() async throws(NodeServerError) -> Data {
        let message = try await receive(timeout: idleTimeout)
        guard message.binary else {
            close(code: .malformed)
            throw .unexpectedText
        }
        return message.data
    }

    /// Sends one message; returns once libwebsockets accepted its last fragment (backpressure).
    package func send(_ data: Data, binary: Bool = true) async throws(NodeServerError) {
        do {
            try await engine.send(connectionID: id, data: data, binary: binary)
        } catch let error as NodeServerError {
            throw error
        } catch {
            throw .connectionClosed(code: nil)
        }
    }

    /// Closes with `code` after the queued messages were written. Idempotent.
    package func close(code: NodeCloseCode) {
        engine.close(connectionID: id, code: code)
    }

    /// The next message of either kind (the session driver reads the token with it).
    func receive(timeout: Duration?) async throws(NodeServerError) -> Message {
        let waiterID: UInt64 = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        var timer: Task<Void, Never>?
        if let timeout {
            timer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                self?.fail(waiterID: waiterID, with: .timeout)
            }
        }
        defer { timer?.cancel() }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Message, any Error>) in
                    var resumeReceiving = false
                    let result: Result<Message, NodeServerError>? = state.withLock { state in
                        if !state.inbox.isEmpty {
                            if state.paused, state.authenticated, state.inbox.count <= Self.pauseThreshold / 2 {
                                state.paused = false
                                resumeReceiving = true
                            }
                            return .success(state.inbox.removeFirst())
                        }
                        if state.closed { return .failure(.connectionClosed(code: state.closeCode)) }
                        state.waiter = Waiter(id: waiterID, continuation: continuation)
                        return nil
                    }
                    if resumeReceiving { engine.setReceiving(connectionID: id, enabled: true) }
                    if let result { continuation.resume(with: result) }
                }
            } onCancel: {
                fail(waiterID: waiterID, with: .connectionClosed(code: nil))
            }
        } catch let error as NodeServerError {
            throw error
        } catch {
            throw .connectionClosed(code: nil)
        }
    }

    /// Puts a message back in front (the first binary message when there was no token).
    func unread(_ message: Message) {
        state.withLock { $0.inbox.insert(message, at: 0) }
    }

    /// Whether the token (or LINK_OPEN) was accepted (read by the service thread for the message limit).
    var isAuthenticated: Bool { state.withLock { $0.authenticated } }

    /// The token was accepted: messages up to the maximum size are read from now on.
    func markAuthenticated() {
        let resume: Bool = state.withLock { state in
            state.authenticated = true
            guard state.paused, state.inbox.count < Self.pauseThreshold else { return false }
            state.paused = false
            return true
        }
        if resume { engine.setReceiving(connectionID: id, enabled: true) }
        // An accepted link from node A stops counting against its address (A opens one per session).
        if route.mode == .peer { engine.stopCountingAddress(connectionID: id) }
    }

    private func fail(waiterID: UInt64, with error: NodeServerError) {
        let waiter: Waiter? = state.withLock { state in
            guard let waiter = state.waiter, waiter.id == waiterID else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(throwing: error)
    }

    // MARK: Service thread → Swift

    /// A complete message arrived. Returns true when the service thread should stop reading from
    /// the socket until the reader catches up (``setReceiving`` resumes it).
    func deliver(_ message: Message) -> Bool {
        let (waiter, pause): (Waiter?, Bool) = state.withLock { state in
            // Before authentication nothing more is read after the first message.
            let pauseBeforeAuthentication = !state.authenticated && !state.paused
            if pauseBeforeAuthentication { state.paused = true }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, pauseBeforeAuthentication)
            }
            state.inbox.append(message)
            if !state.paused, state.inbox.count >= Self.pauseThreshold {
                state.paused = true
                return (nil, true)
            }
            return (nil, pauseBeforeAuthentication)
        }
        waiter?.continuation.resume(returning: message)
        return pause
    }

    /// The connection is gone; `code` is the close code sent or received, if any.
    func didClose(code: UInt16?) {
        let waiter: Waiter? = state.withLock { state in
            state.closed = true
            if state.closeCode == nil { state.closeCode = code }
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        waiter?.continuation.resume(throwing: NodeServerError.connectionClosed(code: code))
    }
}
