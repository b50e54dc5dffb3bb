import Dispatch
import Foundation

/// Runs `body(index)` on `count` real threads released together; returns when all have finished.
/// For races on blocking calls (SQLite, PostgreSQL): the cooperative pool has only one thread per core.
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread.detachNewThread {
            start.wait()
            body(index)
            done.leave()
        }
    }
    for _ in 0..<count { start.signal() }
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            done.wait()
            continuation.resume()
        }
    }
}
