#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a POSIX mutex: the package's one lock type.
///
/// Used instead of `Synchronization.Mutex`, which on Linux locks with futexes inside the
/// uninstrumented standard library: ThreadSanitizer does not see its hand-over and reports every
/// access made under it as a race. `pthread_mutex_lock`/`unlock` are intercepted by the sanitizers,
/// so runs under `--sanitize=thread` report only real races. Uncontended cost is one
/// lock/unlock pair (tens of nanoseconds), the same order as `Mutex`.
///
/// The body runs with the lock held: keep it short, never `await` or call out to code that may take
/// another lock in a different order.
package final class LockedValue<Value>: @unchecked Sendable {
    // The mutex lives at a stable heap address (a pthread mutex must not move).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ initialValue: sending Value) {
        value = initialValue
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // Default attributes; the only failure modes are resource exhaustion and invalid attributes.
        let result = pthread_mutex_init(mutex, nil)
        precondition(result == 0, "pthread_mutex_init failed (\(result))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
