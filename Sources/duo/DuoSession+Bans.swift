import Foundation
import MPCCrypto
import SilentShardCore

/// The app's side of bans (`specs/session.md` §9.4). When the app's own checks raise
/// AbortAndBan against the node (a failed consistency check in signing), the app records a ban on the
/// node key through its `StorageClient` under the reserved id `"~ss/ban/" + hex(node key)`. Afterwards
/// every duo operation with that node except reconcile (and export, which lets the user move funds)
/// is refused locally with `partyBanned`. Nobody bans on another party's ABORT or on unauthenticated
/// bytes: only this app's own protocol checks lead here. Deleting the record (an operator's or
/// support's decision) lifts the ban.
extension DuoSession {
    /// The storage id of the ban record on the node key `cloudKey`.
    static func banRecordId(cloudKey: Ed25519.VerifyingKey) -> String {
        KeyId.banPrefix + Hex.encode(cloudKey.bytes)
    }

    /// Throws `partyBanned` when this app has banned the node `cloudKey`.
    func refuseIfBanned(cloudKey: Ed25519.VerifyingKey, operation: SessionOperation) async throws(SilentShardError) {
        guard operation != .reconcile, operation != .export else { return }
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: Self.banRecordId(cloudKey: cloudKey)) }
        catch { throw SilentShardError(storage: error) }
        if record?.current != nil { throw .partyBanned(party: .node(1)) }
    }

    /// Records the ban after this app's own AbortAndBan(node). Best effort on storage failure: the
    /// protocol error is what the caller sees either way.
    func recordBanIfRequired(_ error: SilentShardError, cloudKey: Ed25519.VerifyingKey, instanceID: [UInt8]) async {
        guard case .abortProtocolAndBanParty(party: .node(let index)) = error else { return }
        let evidence = AppBanRecord(nodeIndex: index, bannedAtMilliseconds: sessionMilliseconds,
                                    instanceID: instanceID)
        let record = KeyshareRecord(keyId: Self.banRecordId(cloudKey: cloudKey),
                                    current: StoredShare(kind: .sdkRecord, bytes: evidence.encoded))
        try? await storageClient.write(record)
    }
}
