#if !canImport(Darwin)
internal import CSocketShims
import Foundation
import Glibc

/// An `eventfd` that other threads write to wake a poll loop, plus a cancellation flag. Writes after
/// `close()` are dropped (the descriptor number may be reused by then).
final class WakeSignal: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = true
    private var cancelled = false
    /// The descriptor to poll for `POLLIN`; valid until `close()`, which only its owner calls.
    let descriptor: Int32

    init() throws(NetworkError) {
        let fd = silentshard_eventfd_nonblocking()
        guard fd >= 0 else { throw .connectionFailed(reason: "eventfd: \(String(cString: strerror(errno)))") }
        descriptor = fd
    }

    /// Wakes the owner's poll.
    func wake() {
        lock.withLock {
            guard isOpen else { return }
            var one: UInt64 = 1
            _ = withUnsafeBytes(of: &one) { Glibc.write(descriptor, $0.baseAddress, 8) }
        }
    }

    /// Marks the operation cancelled and wakes the owner.
    func cancel() {
        lock.withLock { cancelled = true }
        wake()
    }

    var isCancelled: Bool { lock.withLock { cancelled } }

    /// Consumes pending wakes (owner only).
    func drain() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { Glibc.read(descriptor, $0.baseAddress, 8) }
    }

    /// Closes the descriptor (owner only, once it stopped polling).
    func close() {
        lock.withLock {
            guard isOpen else { return }
            isOpen = false
            _ = Glibc.close(descriptor)
        }
    }
}

/// Blocks SIGPIPE on the calling thread: writes to a socket the peer reset then fail with EPIPE
/// instead of killing the process (OpenSSL's socket BIO uses plain `write`).
func blockSIGPIPEOnThisThread() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &set, nil)
}

/// Names the calling thread as `ps`, `top` and `/proc/<pid>/task/*/comm` show it (at most 15
/// bytes on Linux, the rest is cut). `Thread.name` set before `start()` does not reach the kernel there.
func nameThisThread(_ name: String) {
    _ = silentshard_name_this_thread(name)
}

extension ContinuousClock.Instant {
    /// Milliseconds from now until this instant for `poll` (0 when past, rounded up).
    var pollTimeoutFromNow: Int32 {
        let remaining = self - ContinuousClock.now
        if remaining <= .zero { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
#endif
