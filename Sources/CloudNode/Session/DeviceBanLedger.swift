import Foundation
import MPCCrypto
import SilentShardCore

/// session.md §9.4 at one node process: the devices this process banned, known to every session of the process
/// the moment the ban is decided — before the store has it — and kept until the store does.
///
/// Security review finding 12: a ban whose store write failed was dropped silently (`try?`), and the
/// device went on. Now the write is retried; while it has not succeeded the device stays banned in this
/// process's memory (its sessions are refused with BANNED), and the failure is logged. An operator's
/// `liftBan` applies to the store: a ban that never reached the store lasts until the process restarts.
///
/// It also keeps one device's checks apart (finding 12, second half): ``checkedStep(_:exclusive:isBanned:advance:)``
/// in this process; across a cluster's processes a DKLs23 step also holds the device's check lease in the store
/// (`DeviceCheckLease`, issue 33 item 4), whose policy and test hook this ledger carries.
package final class DeviceBanLedger: Sendable {
    private let pending = LockedValue<Set<[UInt8]>>([])
    private let lease = LockedValue(DeviceCheckLeasePolicy.standard)
    private let hook = LockedValue<(@Sendable (_ instanceID: [UInt8], _ step: Int, _ point: CheckPoint) async -> Void)?>(nil)

    /// How this process's steps hold and wait for a device's check lease (``DeviceCheckLeasePolicy/standard``).
    package var leasePolicy: DeviceCheckLeasePolicy {
        get { lease.withLock { $0 } }
        set { lease.withLock { $0 = newValue } }
    }

    /// Where the test hook runs (``setCheckHook(_:)``).
    package enum CheckPoint: Sendable, Equatable {
        /// An attempt to take the device's check lease found another holder's (the step waits, then tries again).
        case leaseBusy
        /// The lease is held and the device is not banned: the step's checks run next.
        case checking
        /// The step ended: its lease was released (or, after a ban the store refused, kept until it expires).
        case ended
    }

    /// Tests only: `hook` runs at each ``CheckPoint`` of each leased step (ECDSA signing or presigning over a
    /// device's messages), with the session's instance id and the step's index in the session (0 = the first).
    package func setCheckHook(_ hook: (@Sendable (_ instanceID: [UInt8], _ step: Int, _ point: CheckPoint) async -> Void)?) {
        self.hook.withLock { $0 = hook }
    }

    /// Runs the test hook, if any (``setCheckHook(_:)``).
    func checkHook(_ instanceID: [UInt8], _ step: Int, _ point: CheckPoint) async {
        guard let hook = hook.withLock({ $0 }) else { return }
        await hook(instanceID, step, point)
    }
    /// Per device: whether a checked step runs now (the key is present) and who waits for its turn.
    private let turns = LockedValue<[[UInt8]: [CheckedContinuation<Void, Never>]]>([:])
    /// Waits before the second and third store attempts.
    static let retryDelays: [Duration] = [.milliseconds(50), .milliseconds(250)]

    /// Whether this process banned `device` and the store may not have it yet.
    func contains(_ device: [UInt8]) -> Bool { pending.withLock { $0.contains(device) } }

    /// Runs `advance` — a protocol step over the device's messages, where its consistency checks run —
    /// for one session of `device` (session.md §9.4, security review finding 12):
    /// * refused with `partyBanned(.app)` (ABORT BANNED) if the device is banned by then, before the step
    ///   runs, whether its messages would pass or not — so the abort says nothing about them;
    /// * if the step catches the device cheating (AbortAndBan), the device is banned in this process's
    ///   memory before the step ends (the store write follows, ``ban(_:log:write:)``);
    /// * `exclusive` (signing and presigning, whose KOS, multiplication and Γ checks depend on this node's
    ///   secrets): one step at a time per device in this process, so no other session's check of the
    ///   device runs between a failed check and its ban. Concurrent sessions of a cheating device learn
    ///   the outcome of at most one failed check.
    func checkedStep(_ device: [UInt8], exclusive: Bool, isBanned: () async -> Bool,
                     advance: () async throws(SilentShardError) -> Void) async throws(SilentShardError) {
        if exclusive { await takeTurn(device) }
        defer { if exclusive { endTurn(device) } }
        // `isBanned` reads this ledger first, then the store (`NodeBans.deviceBanned`).
        if await isBanned() { throw .partyBanned(party: .app) }
        do {
            try await advance()
        } catch {
            if case .abortProtocolAndBanParty(party: .app) = error { pending.withLock { _ = $0.insert(device) } }
            throw error
        }
    }

    private func takeTurn(_ device: [UInt8]) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let free = turns.withLock { table -> Bool in
                if table[device] == nil {
                    table[device] = []
                    return true
                }
                table[device]?.append(continuation)
                return false
            }
            if free { continuation.resume() }
        }
    }

    private func endTurn(_ device: [UInt8]) {
        let next = turns.withLock { table -> CheckedContinuation<Void, Never>? in
            guard var waiting = table[device] else { return nil }
            guard !waiting.isEmpty else {
                table[device] = nil
                return nil
            }
            let next = waiting.removeFirst()
            table[device] = waiting
            return next
        }
        next?.resume()
    }

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
