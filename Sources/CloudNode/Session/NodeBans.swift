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
    func gate(for setup: ValidatedSetup) -> SessionDriver.AdvanceGate {
        let device = setup.deviceKey.identity, exclusive = setup.operation == .sign || setup.operation == .preSign
        return { advance async throws(SilentShardError) in
            try await ledger.checkedStep(device, exclusive: exclusive, isBanned: { await deviceBanned(device) },
                                         advance: advance)
        }
    }

    /// Bans the device of `setup` when `error` is this node's own AbortAndBan(app).
    func banIfRequired(_ error: SilentShardError, setup: ValidatedSetup) async {
        guard case .abortProtocolAndBanParty(party: .app) = error else { return }
        let device = setup.deviceKey.identity, instanceID = setup.instanceID
        let reason = "AbortAndBan in \(setup.operation)", party = party, store = store, queue = queue
        await ledger.ban(device, log: { NodeLogger.standardError.log($0) }) {
            try await queue.run { () throws(NodeStoreError) in
                _ = try store.ban(deviceKey: device, reason: reason, instanceId: instanceID.bytes, party: party)
            }
        }
    }
}
