import Dispatch
import Synchronization

/// Where a step runner's synchronous `NodeShareStore` calls run: off Swift's cooperative pool (they
/// block on SQLite or PostgreSQL), on a few serial dispatch queues taken in turn. With one queue a
/// process ran one store transaction at a time; a PostgreSQL store has a pool of connections, so
/// sessions of different keys now reach the database in parallel (a SQLite store serializes them on
/// its connection lock as before). One caller's calls stay in order: each awaits the previous one.
final class NodeStoreQueues: Sendable {
    private let queues: [DispatchQueue]
    private let turn = Atomic<UInt64>(0)

    init(label: String, width: Int = 4) {
        queues = (0..<max(1, width)).map { DispatchQueue(label: "\(label).\($0)") }
    }

    /// Runs `body` on the next queue and returns its result or rethrows its error.
    func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let index = Int(turn.wrappingAdd(1, ordering: .relaxed).oldValue % UInt64(queues.count))
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queues[index].async { continuation.resume(returning: Result { () throws(Failure) -> T in try body() }) }
        }
        return try result.get()
    }
}
