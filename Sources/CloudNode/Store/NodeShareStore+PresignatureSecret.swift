import Foundation
import SessionEngine

extension NodeShareStore {
    /// The held presignature `presignatureId` of the store's current epoch and its opened secret (the bytes of a
    /// ``StoredPresignatureSecret``), read without a write transaction: lets a FINAL_REQUEST be authenticated before
    /// the consuming transaction (`docs/protocol/session.md` §8.3), so a request that does not authenticate writes
    /// nothing. nil when there is no such row, the row is of an older epoch, or it does not open under the master
    /// key: `consumePresignature` answers those (and audits the last) as before.
    package func heldPresignatureSecret(id presignatureId: [UInt8]) throws(NodeStoreError)
        -> (presignature: NodePresignature, secret: [UInt8])? {
        try Self.require32(presignatureId, "presignature id")
        return try reading { db throws(NodeStoreError) -> (presignature: NodePresignature, secret: [UInt8])? in
            guard let row = try db.first("""
                SELECT key_id, gen, party, device_key, expires_at, nonce, sealed FROM presignatures
                WHERE presig_id = ? AND epoch = (SELECT value FROM meta WHERE name = 'presign_epoch')
                """, [.blob(presignatureId)]) else { return nil }
            let (expiresAt, party) = (try row.integer(4), try row.integer(2))
            guard party >= 0 && party <= 255 else { return nil }
            let presignature = NodePresignature(
                id: presignatureId, keyId: try row.text(0), gen: try row.blob(1), party: UInt8(party),
                deviceKey: try row.blob(3), expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAt)), secret: [])
            let ad = Sealing.presignatureAssociatedData(
                id: presignatureId, keyId: presignature.keyId, gen: presignature.gen, party: presignature.party,
                deviceKey: presignature.deviceKey, expiresAt: expiresAt)
            guard let secret = Sealing.open(try row.blob(6), nonce: try row.blob(5), key: masterKey, associatedData: ad) else {
                return nil
            }
            return (presignature, secret)
        }
    }
}
