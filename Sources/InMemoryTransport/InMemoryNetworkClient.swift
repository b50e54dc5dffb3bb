import MPCCrypto
import Foundation
import SilentShardCore

/// A test-only custom transport (the seeds' "BLE-style" `NetworkClient`): two clients joined by an
/// in-memory pipe. What one side sends, the other reads, in order. `connect` records the action and
/// params it was handed, so tests can check what routing a provider selected. Thread-safe, so the
/// two ends can run in different tasks.
public final class InMemoryNetworkClient: NetworkClient, @unchecked Sendable {
    /// One message on the pipe.
    public enum Message: Equatable, Sendable {
        case text(String)
        case binary(Data)

        /// The message's bytes (UTF-8 for text).
        public var data: Data {
            switch self {
            case .text(let text): Data(text.utf8)
            case .binary(let data): data
            }
        }
    }

    /// One `connect` call as received.
    public struct Connection: Sendable {
        public var action: NetworkAction
        public var params: String?
    }

    private let inbox: InMemoryMailbox
    private let outbox: InMemoryMailbox
    private let state = LockedValue<(connections: [Connection], isConnected: Bool)>(([], false))

    /// Every `connect` so far, oldest first.
    public var connections: [Connection] { state.withLock { $0.connections } }
    /// Whether a channel is open.
    public var isConnected: Bool { state.withLock { $0.isConnected } }

    private init(inbox: InMemoryMailbox, outbox: InMemoryMailbox) {
        self.inbox = inbox
        self.outbox = outbox
    }

    /// Two clients joined by a pipe.
    public static func pair() -> (InMemoryNetworkClient, InMemoryNetworkClient) {
        let forward = InMemoryMailbox()
        let backward = InMemoryMailbox()
        return (InMemoryNetworkClient(inbox: backward, outbox: forward), InMemoryNetworkClient(inbox: forward, outbox: backward))
    }

    nonisolated(nonsending) public func connect(action: NetworkAction, params: String?) async throws {
        state.withLock {
            $0.connections.append(Connection(action: action, params: params))
            $0.isConnected = true
        }
        inbox.open()
    }

    nonisolated(nonsending) public func send(bytes: Data) async throws {
        guard isConnected else { throw NetworkError.notConnected }
        outbox.post(.binary(bytes))
    }

    nonisolated(nonsending) public func send(text: String) async throws {
        guard isConnected else { throw NetworkError.notConnected }
        outbox.post(.text(text))
    }

    nonisolated(nonsending) public func read() async throws -> Data {
        try await readMessage().data
    }

    /// The next message with its kind.
    nonisolated(nonsending) public func readMessage() async throws -> Message {
        guard isConnected else { throw NetworkError.notConnected }
        return try await inbox.next()
    }

    nonisolated(nonsending) public func disconnect() async throws {
        state.withLock { $0.isConnected = false }
        inbox.shut()
    }
}

/// One direction of the pipe: a queue with at most one waiting reader.
final class InMemoryMailbox: @unchecked Sendable {
    private let lock = NSLock()
    private var queue: [InMemoryNetworkClient.Message] = []
    private var waiter: CheckedContinuation<InMemoryNetworkClient.Message, any Error>?
    private var isOpen = false

    func open() { lock.withLock { isOpen = true } }

    func post(_ message: InMemoryNetworkClient.Message) {
        let reader: CheckedContinuation<InMemoryNetworkClient.Message, any Error>? = lock.withLock {
            guard let current = waiter else {
                queue.append(message)
                return nil
            }
            waiter = nil
            return current
        }
        reader?.resume(returning: message)
    }

    /// The next message; a cancelled task's wait ends with `CancellationError` (like a socket read).
    func next() async throws -> InMemoryNetworkClient.Message {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome: Result<InMemoryNetworkClient.Message, any Error>? = lock.withLock {
                    if !queue.isEmpty { return .success(queue.removeFirst()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    guard isOpen, waiter == nil else { return .failure(NetworkError.notConnected) }
                    waiter = continuation
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let reader: CheckedContinuation<InMemoryNetworkClient.Message, any Error>? = lock.withLock {
                defer { waiter = nil }
                return waiter
            }
            reader?.resume(throwing: CancellationError())
        }
    }

    func shut() {
        let reader: CheckedContinuation<InMemoryNetworkClient.Message, any Error>? = lock.withLock {
            isOpen = false
            defer { waiter = nil }
            return waiter
        }
        reader?.resume(throwing: NetworkError.notConnected)
    }
}
