import Foundation
import MPCCrypto
import MPCProtocols

/// The app's side of bans (`docs/protocol/session.md` §9.4). When the app's own checks raise AbortAndBan against
/// a node (a failed OT or multiplication consistency check in signing or presigning), the app records a
/// ban on that node's key — the key its ACCEPT carried (duo: normally the cloud key; trio: the certified
/// node key) — through its `StorageClient` under `"~ss/ban/" + hex(node key)`, with the node's role and
/// the session as evidence. Afterwards every session in which that node takes part is refused with
/// `partyBanned(node)`, except reconcile and export (export lets the user move funds): in duo before
/// any connection when the node's key is the cloud key, and in every mode right after the ACCEPTs,
/// before the protocol's second flight (only the first round's public broadcasts may have travelled
/// with the SETUP, flight F1). In trio the share-changing operations (`SessionOperation.changesShares`:
/// keygen, import, refresh, recover, hard derivation) need both nodes and are refused; signing and
/// presigning work with the other node. Nobody bans on another party's ABORT or on unauthenticated
/// bytes: only this app's own protocol checks lead here. Deleting the record (an operator's or
/// support's decision) lifts the ban.
extension AppSession {
    /// The storage id of the ban record on the node key `nodeKey`.
    package static func banRecordId(nodeKey: Ed25519.VerifyingKey) -> String {
        KeyId.banPrefix + Hex.encode(nodeKey.bytes)
    }

    /// Whether this app has banned the node key `nodeKey`.
    private func isBanned(_ nodeKey: Ed25519.VerifyingKey) async throws(SilentShardError) -> Bool {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: Self.banRecordId(nodeKey: nodeKey)) }
        catch { throw SilentShardError(storage: error) }
        return record?.current != nil
    }

    /// Throws `partyBanned(node)` when this app has banned `nodeKey` (reconcile and export pass).
    func refuseIfBanned(nodeKey: Ed25519.VerifyingKey, node: PartyIndex,
                        operation: SessionOperation) async throws(SilentShardError) {
        guard operation != .reconcile, operation != .export else { return }
        if try await isBanned(nodeKey) { throw .partyBanned(party: .node(node)) }
    }

    /// After every participating node's ACCEPT: `partyBanned` (with an ABORT to the nodes) when this app
    /// has banned one of them by the key its ACCEPT carries. Reconcile and export are never refused. A
    /// duo node whose key is the cloud key was checked before connecting and is not read again.
    func refuseBannedNodes(_ nodes: [PartyIndex], operation: SessionOperation, cloudKey: Ed25519.VerifyingKey,
                           channel: inout PartyFrameChannel, send: SessionDriver.Send) async throws(SilentShardError) {
        guard operation != .reconcile, operation != .export else { return }
        let checkedBeforeConnecting = mode == .duo ? cloudKey : nil
        for node in nodes {
            guard let nodeKey = channel.receiver.accepts[node]?.nodeKey, nodeKey != checkedBeforeConnecting,
                  try await isBanned(nodeKey)
            else { continue }
            if let frame = try? channel.control(.abort, payload: AbortPayload(code: .cancelled, blamed: nil, detail: "").encoded) {
                try? await send([frame])
            }
            throw .partyBanned(party: .node(node))
        }
    }

    /// Records the ban after this app's own AbortAndBan(node). Best effort on storage failure: the
    /// protocol error is what the caller sees either way.
    func recordBanIfRequired(_ error: SilentShardError, channel: PartyFrameChannel) async {
        guard case .abortProtocolAndBanParty(party: .node(let index)) = error,
              let nodeKey = channel.receiver.accepts[index]?.nodeKey
        else { return }
        let evidence = AppBanRecord(nodeIndex: index, bannedAtMilliseconds: clock.milliseconds, instanceID: channel.instanceID)
        let record = KeyshareRecord(keyId: Self.banRecordId(nodeKey: nodeKey),
                                    current: StoredShare(kind: .sdkRecord, bytes: evidence.encoded))
        try? await storageClient.write(record)
    }
}
