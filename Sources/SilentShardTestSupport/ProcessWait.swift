import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension Process {
    /// Waits for the child to exit, at most `timeout` seconds; then SIGKILL and false. Polls `isRunning`:
    /// Foundation's `waitUntilExit()` can spin forever on Linux when called off the main run loop.
    @discardableResult
    public func waitForExit(timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline {
                kill(processIdentifier, SIGKILL)
                while isRunning { usleep(10_000) }
                return false
            }
            usleep(10_000)
        }
        return true
    }

    /// SIGTERM, then waits up to `grace` seconds for the child to exit and SIGKILLs it if it has not:
    /// a test never leaves a process behind, whatever the child does with SIGTERM. Blocks the caller.
    public func terminate(grace: TimeInterval) {
        guard isRunning else { return }
        terminate()
        waitForExit(timeout: grace)
    }
}
