import Foundation
import Synchronization

/// An in-process, two-way message link between an app and a node: the stand-in for a radio link
/// (BLE characteristic writes and notifications), a native bridge or an app socket. Messages keep
/// their boundaries and order. `close()` ends both directions; messages already queued are still
/// delivered, then reads fail with ``MessagePipe/Closed``.
public final class MessagePipe: Sendable {
    /// Thrown by a send on, or a read past the end of, a closed pipe.
    public struct Closed: Error {}

    /// App → node.
    public let toNode = MessageQueue()
    /// Node → app.
    public let toApp = MessageQueue()

    public init() {}

    /// Closes both directions (either side may call it, any number of times).
    public func close() {
        toNode.close()
        toApp.close()
    }
}

/// One direction of a ``MessagePipe``: a queue with at most one waiting reader.
public final class MessageQueue: Sendable {
    private struct State {
        var messages: [Data] = []
        var reader: CheckedContinuation<Data, any Error>?
        var closed = false
    }
    private let state = Mutex(State())

    /// Queues one message (wakes a waiting reader).
    public func post(_ message: Data) throws {
        let reader: CheckedContinuation<Data, any Error>? = try state.withLock { state in
            guard !state.closed else { throw MessagePipe.Closed() }
            guard let reader = state.reader else {
                state.messages.append(message)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: message)
    }

    /// The next message; suspends until one arrives or the queue closes.
    public func next() async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Data, any Error>? = state.withLock { state in
                if !state.messages.isEmpty { return .success(state.messages.removeFirst()) }
                guard !state.closed, state.reader == nil else { return .failure(MessagePipe.Closed()) }
                state.reader = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Ends the queue: a waiting reader fails now, later reads fail once the queue is empty.
    public func close() {
        let reader: CheckedContinuation<Data, any Error>? = state.withLock { state in
            state.closed = true
            defer { state.reader = nil }
            return state.reader
        }
        reader?.resume(throwing: MessagePipe.Closed())
    }
}
