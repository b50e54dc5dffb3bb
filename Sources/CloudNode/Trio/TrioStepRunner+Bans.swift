import Foundation
import SilentShardCore

/// §9.4 at a trio node (A or B): this node's own AbortAndBan(app) — a failed OT or multiplication
/// consistency check of the app in signing or presigning — bans the device key (all its keys) and
/// deletes the presignatures shared with it, in one transaction with its audit line. Later sessions of
/// the device are refused with BANNED (reconcile still runs) until an operator lifts the ban. Never on
/// another party's ABORT or on unauthenticated bytes: those never surface as
/// `abortProtocolAndBanParty`. A node that catches the *other node* cheating aborts without a ban
/// (nodes of one cluster are an operator's matter).
extension TrioStepRunner {
    /// §9.4: whether `device` is banned now, by this process or another of its cluster. A failed read
    /// counts as not banned (the session passed the start-of-session check; the next flight reads again).
    func deviceBanned(_ device: [UInt8]) async -> Bool {
        if bans.contains(device) { return true }
        return (try? await onStoreQueue { [store] () throws(NodeStoreError) in try store.isBanned(deviceKey: device) }) ?? false
    }

    /// §9.4, finding 12: the gate around each protocol step over the device's messages
    /// (``DeviceBanLedger/checkedStep(_:exclusive:isBanned:advance:)``; exclusive for signing and presigning).
    func checkedStep(_ setup: ValidatedSetup) -> SessionDriver.AdvanceGate {
        let device = setup.deviceKey.identity, exclusive = setup.operation == .sign || setup.operation == .preSign
        return { [self] advance async throws(SilentShardError) in
            try await bans.checkedStep(device, exclusive: exclusive, isBanned: { await self.deviceBanned(device) },
                                       advance: advance)
        }
    }

    func banIfRequired(_ error: SilentShardError, setup: ValidatedSetup) async {
        guard case .abortProtocolAndBanParty(party: .app) = error else { return }
        let device = setup.deviceKey.identity, instanceID = setup.instanceID
        let reason = "AbortAndBan in \(setup.operation)"
        let party = "node \(identity.index)"
        await bans.ban(device, log: { NodeLogger.standardError.log($0) }) { [self] in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                _ = try store.ban(deviceKey: device, reason: reason, instanceId: instanceID, party: party)
            }
        }
    }
}
