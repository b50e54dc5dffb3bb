internal import CSocketShims
import Foundation

/// `bench --pin`: during the WebSocket runs the app side (this process) on CPU 0 and every node
/// process on CPU 1, so the two parties of a session compute on separate cores as they do on separate
/// machines. Unpinned on a 2-core machine, the scheduler at times runs both parties' rounds on one
/// core (measured: duo ECDSA sign over WebSocket ~10.5 ms median unpinned vs ~8 ms pinned, same
/// build). The in-memory runs (both parties in this process) get every CPU back.
enum CPUPinning {
    /// Whether pinning is possible here (Linux with at least 2 online CPUs).
    static var available: Bool {
        #if os(Linux)
        return ProcessInfo.processInfo.activeProcessorCount >= 2
        #else
        return false
        #endif
    }

    /// Pins every current thread of `pid` (0 = this process) to `cpu`; threads they create later inherit it.
    /// Returns false if any thread could not be pinned.
    @discardableResult
    static func pin(process pid: Int32, toCPU cpu: Int) -> Bool {
        setCPUs(process: pid, first: cpu, count: 1)
    }

    /// Lets every thread of `pid` (0 = this process) run on every online CPU again.
    @discardableResult
    static func release(process pid: Int32) -> Bool {
        setCPUs(process: pid, first: 0, count: ProcessInfo.processInfo.activeProcessorCount)
    }

    private static func setCPUs(process pid: Int32, first: Int, count: Int) -> Bool {
        #if os(Linux)
        let directory = pid == 0 ? "/proc/self/task" : "/proc/\(pid)/task"
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return false }
        var pinned = true
        for task in tasks {
            guard let id = Int32(task) else { continue }
            // A thread that exited meanwhile (ESRCH) is not a failure.
            if silentshard_set_task_cpus(id, Int32(first), Int32(count)) != 0, errno != ESRCH { pinned = false }
        }
        return pinned
        #else
        return false
        #endif
    }
}
