import Foundation
import MPCCrypto
import SilentShardCore

/// A `SilentShardLogger` that keeps every event, in order.
public final class RecordingLogger: SilentShardLogger, @unchecked Sendable {
    private let log = LockedValue<[SilentShardEvent]>([])

    public init() {}

    public var events: [SilentShardEvent] { log.withLock { $0 } }

    public func record(_ event: SilentShardEvent) { log.withLock { $0.append(event) } }

    public func reset() { log.withLock { $0 = [] } }
}
