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

/// Bytes of the operation running on this task (its steps add to it).
package final class OperationTally: Sendable {
    @TaskLocal package static var current: OperationTally?

    private let bytes = LockedValue<(sent: Int, received: Int)>((0, 0))

    package init() {}

    package var sent: Int { bytes.withLock { $0.sent } }
    package var received: Int { bytes.withLock { $0.received } }

    package func add(sent: Int = 0, received: Int = 0) {
        bytes.withLock {
            $0.sent += sent
            $0.received += received
        }
    }
}

/// One step's byte counts, kept by the step's send and read closures.
package final class StepTally: Sendable {
    private let bytes = LockedValue<(sent: Int, received: Int)>((0, 0))

    package init() {}

    package var sent: Int { bytes.withLock { $0.sent } }
    package var received: Int { bytes.withLock { $0.received } }

    package func add(sent: Int = 0, received: Int = 0) {
        bytes.withLock {
            $0.sent += sent
            $0.received += received
        }
        OperationTally.current?.add(sent: sent, received: received)
    }
}
