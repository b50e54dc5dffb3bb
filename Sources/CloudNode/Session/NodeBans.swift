import MPCCrypto
import SilentShardCore

/// session.md §9.4 at a node, for duo and trio alike: reading, gating and recording bans of app devices, over the
/// process's `DeviceBanLedger` and the node's store.
///
/// A node's own AbortAndBan(app) — a failed OT, multiplication or Γ consistency check of the app in
/// signing or presigning — bans the device key (all its keys) and deletes the presignatures shared with
/// it, in one transaction with its audit line. Later sessions of the device are refused with BANNED
/// (reconcile still runs) until an operator lifts the ban. Never on another party's ABORT or on
/// unauthenticated bytes: those never surface as `abortProtocolAndBanParty(.app)`. A trio node that
/// catches the other node cheating aborts without a ban (nodes of one cluster are an operator's matter).
struct NodeBans: Sendable {
    let ledger: DeviceBanLedger
    let store: NodeShareStore
    let queue: NodeStoreQueues
    /// The party named in the ban record (`node`, `node 1`, `node 2`).
    let party: String

    /// Whether `device` is banned now, by this process or another of its cluster. A failed read counts as
    /// not banned (the session passed the start-of-session check; the next step reads again).
    func deviceBanned(_ device: [UInt8]) async -> Bool {
        if ledger.contains(device) { return true }
        let store = store
        return (try? await queue.run { () throws(NodeStoreError) in try store.isBanned(deviceKey: device) }) ?? false
    }

    /// Finding 12: the gate around each protocol step over the device's messages
    /// (``DeviceBanLedger/checkedStep(_:exclusive:isBanned:advance:)``; exclusive for signing and presigning).
    /// Issue 33 item 4: an ECDSA (DKLs23) signing or presigning step — whose checks' outcomes depend on this node's
    /// long-lived secrets — also holds the device's check lease in the store (`DeviceCheckLease`), which keeps
    /// the device's checks apart across the processes of a cluster; the store's ban is then read under the
    /// lease, once it is taken (the in-process turn checks only this process's memory first).
    func gate(for setup: ValidatedSetup) -> SessionDriver.AdvanceGate {
        let device = setup.deviceKey.identity, exclusive = setup.operation == .sign || setup.operation == .preSign
        guard exclusive, setup.algorithm == .ecdsa else {
            return { advance async throws(SilentShardError) in
                try await ledger.checkedStep(device, exclusive: exclusive, isBanned: { await deviceBanned(device) },
                                             advance: advance)
            }
        }
        let lease = DeviceCheckLease(bans: self, setup: setup), steps = LockedValue(0)
        return { advance async throws(SilentShardError) in
            let step = steps.withLock { count in
                defer { count += 1 }
                return count
            }
            try await ledger.checkedStep(device, exclusive: true, isBanned: { ledger.contains(device) }) {
                () async throws(SilentShardError) in
                try await lease.run(step: step, advance: advance)
            }
        }
    }

    /// The reason recorded with a ban of `setup`'s device.
    static func reason(_ setup: ValidatedSetup) -> String { "AbortAndBan in \(setup.operation)" }

    /// Bans the device of `setup` when `error` is this node's own AbortAndBan(app) — unless the store already
    /// has this session's ban (a leased step stores it before it releases the lease, `DeviceCheckLease`).
    func banIfRequired(_ error: SilentShardError, setup: ValidatedSetup) async {
        guard case .abortProtocolAndBanParty(party: .app) = error else { return }
        await store(banOf: setup, unlessStored: true)
    }

    /// Bans `setup`'s device in this process at once and in the store (retried, `DeviceBanLedger/ban`); returns
    /// whether the store has it. `unlessStored`: no second write (nor audit line) when the store already has
    /// this session's ban.
    @discardableResult
    func store(banOf setup: ValidatedSetup, unlessStored: Bool = false) async -> Bool {
        let device = setup.deviceKey.identity, instanceID = setup.instanceID.bytes
        let reason = Self.reason(setup), party = party
        return await ledger.ban(device, log: { NodeLogger.standardError.log($0) }) {
            try await onStore { store throws(NodeStoreError) in
                if unlessStored, try store.ban(deviceKey: device)?.instanceId == instanceID { return }
                _ = try store.ban(deviceKey: device, reason: reason, instanceId: instanceID, party: party)
            }
        }
    }

    /// Runs `body` with the store on one of the runner's store queues.
    func onStore<T: Sendable>(_ body: @escaping @Sendable (NodeShareStore) throws(NodeStoreError) -> T) async throws(NodeStoreError) -> T {
        let store = store
        return try await queue.run { () throws(NodeStoreError) -> T in try body(store) }
    }
}
