import Foundation
import MPCCrypto

/// §9.4 at one node process: the devices this process banned, known to every session of the process
/// the moment the ban is decided — before the store has it — and kept until the store does.
///
/// Security review finding 12: a ban whose store write failed was dropped silently (`try?`), and the
/// device went on. Now the write is retried; while it has not succeeded the device stays banned in this
/// process's memory (its sessions are refused with BANNED), and the failure is logged. An operator's
/// `liftBan` applies to the store: a ban that never reached the store lasts until the process restarts.
final class DeviceBanLedger: Sendable {
    private let pending = LockedValue<Set<[UInt8]>>([])
    /// Waits before the second and third store attempts.
    static let retryDelays: [Duration] = [.milliseconds(50), .milliseconds(250)]

    /// Whether this process banned `device` and the store may not have it yet.
    func contains(_ device: [UInt8]) -> Bool { pending.withLock { $0.contains(device) } }

    /// Bans `device` here at once, then writes the ban with `write` (up to three attempts). Returns whether
    /// the store has it; if not, the device stays banned in memory and `log` says so.
    @discardableResult
    func ban(_ device: [UInt8], log: @Sendable (String) -> Void,
             write: @Sendable () async throws -> Void) async -> Bool {
        pending.withLock { _ = $0.insert(device) }
        for attempt in 0...Self.retryDelays.count {
            do {
                try await write()
                pending.withLock { _ = $0.remove(device) }
                return true
            } catch {
                if attempt < Self.retryDelays.count {
                    try? await Task.sleep(for: Self.retryDelays[attempt])
                }
            }
        }
        log("ban of a device could not be stored after \(Self.retryDelays.count + 1) attempts; "
            + "its sessions are refused by this process until it restarts")
        return false
    }
}
