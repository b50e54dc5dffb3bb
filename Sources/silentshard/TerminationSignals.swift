import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The write end of the self-pipe the signal handler writes to (set once, before the handler is
/// installed; read-only afterwards, so reading it from the handler is safe).
nonisolated(unsafe) private var terminationPipeWriteEnd: Int32 = -1

/// SIGINT / SIGTERM as an awaitable event, with no window in which a signal is lost.
///
/// The handlers are installed synchronously with `signal(2)` when the value is created (before the
/// node prints its port): before that moment a SIGTERM still has its default action (the process
/// ends, which is what the sender asked for); from it on, the handler writes one byte to a pipe (the
/// only async-signal-safe thing it does), and the pipe keeps the byte until a dispatch source reads it.
/// (libdispatch's own signal sources install their handler asynchronously after `SIG_IGN`: a SIGTERM
/// in between was discarded, and the node never stopped.)
final class TerminationSignals: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var source: (any DispatchSourceRead)?

    init() {
        signal(SIGPIPE, SIG_IGN)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            // No pipe (descriptor exhaustion at start): keep the default actions, which end the process.
            return
        }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        terminationPipeWriteEnd = ends[1]
        let readEnd = ends[0]
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: .global())
        source.setEventHandler { [weak self] in
            var byte: UInt8 = 0
            _ = read(readEnd, &byte, 1)
            self?.fire()
        }
        source.resume()
        self.source = source
        for number in [SIGINT, SIGTERM] {
            signal(number) { _ in
                var byte: UInt8 = 1
                _ = write(terminationPipeWriteEnd, &byte, 1)
            }
        }
    }

    private func fire() {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            fired = true
            defer { waiter = nil }
            return waiter
        }
        continuation?.resume()
    }

    /// Returns once SIGINT or SIGTERM arrived (at once if one already did).
    func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let already = lock.withLock { () -> Bool in
                if fired { return true }
                waiter = continuation
                return false
            }
            if already { continuation.resume() }
        }
    }
}
