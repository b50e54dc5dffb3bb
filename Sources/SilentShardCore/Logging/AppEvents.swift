import Foundation
import MPCCrypto

/// The app session's event outlet: the logger the app set (`SilentShardLoggers.none` by default) and the
/// byte tally of the operation running on the current task.
package final class AppEvents: Sendable {
    private let box = LockedValue<any SilentShardLogger>(SilentShardLoggers.none)

    package init() {}

    package var logger: any SilentShardLogger {
        get { box.withLock { $0 } }
        set { box.withLock { $0 = newValue } }
    }

    package func emit(_ event: SilentShardEvent) { logger.record(event) }
}

/// Bytes sent and received: of one step, or of the operation running on this task (`current`), to which
/// every step's tally also adds.
package final class ByteTally: Sendable {
    /// The tally of the operation running on this task (set by `AppSession.observed`).
    @TaskLocal package static var current: ByteTally?

    private let bytes = LockedValue<(sent: Int, received: Int)>((0, 0))
    private let operation: ByteTally?

    /// A tally that also adds to `operation` (a step's, inside an operation).
    package init(addingTo operation: ByteTally? = nil) { self.operation = operation }

    package var sent: Int { bytes.withLock { $0.sent } }
    package var received: Int { bytes.withLock { $0.received } }

    package func add(sent: Int = 0, received: Int = 0) {
        bytes.withLock {
            $0.sent += sent
            $0.received += received
        }
        operation?.add(sent: sent, received: received)
    }
}
