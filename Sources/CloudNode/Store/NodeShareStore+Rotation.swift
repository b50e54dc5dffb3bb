import Foundation
import SilentShardCore

/// Master-key rotation: every sealed value (keyshares, presignature secrets, the key check) is opened
/// under the current key and sealed again under the new one with a fresh nonce, in **one**
/// transaction — a crash leaves the whole database under the old key, never half of it. The
/// associated data (which names each row's place) is unchanged, so moved rows still fail to open.
extension NodeShareStore {
    /// What a rotation re-sealed.
    public struct RotationReport: Sendable, Equatable {
        public var keyshares: Int
        public var presignatures: Int
    }

    /// Re-seals the database at `path` from `current` to `new`. Throws `wrongMasterKey` if `current`
    /// does not open it and `integrityFailure` if any row fails to open (nothing is changed then).
    /// Run it with the node stopped (other processes hold the old key); afterwards start the node
    /// with `new` and destroy `current`.
    public static func rotateMasterKey(path: String, from current: NodeMasterKey,
                                       to new: NodeMasterKey) throws(NodeStoreError) -> RotationReport {
        guard current.bytes != new.bytes else { throw .invalidArgument("the new master key equals the current one") }
        let store = try NodeShareStore(path: path, masterKey: current)
        return try store.transaction { db throws(NodeStoreError) -> RotationReport in
            let shares = try sql { () throws(SQLiteError) -> [(keyId: String, slot: Int64, gen: [UInt8], kind: Int64, digest: [UInt8], nonce: [UInt8], sealed: [UInt8])] in
                let select = try db.prepare("SELECT key_id, slot, gen, kind, digest, nonce, sealed FROM keyshares")
                var rows: [(String, Int64, [UInt8], Int64, [UInt8], [UInt8], [UInt8])] = []
                while try select.step() {
                    rows.append((try select.text(0), try select.integer(1), try select.blob(2), try select.integer(3),
                                 try select.blob(4), try select.blob(5), try select.blob(6)))
                }
                return rows
            }
            for row in shares {
                guard let slot = UInt8(exactly: row.slot).flatMap(NodeShareSlot.init(rawValue:)),
                      let kind = UInt8(exactly: row.kind)
                else { throw .integrityFailure(keyId: row.keyId) }
                let ad = Sealing.shareAssociatedData(keyId: row.keyId, slot: slot, gen: row.gen, kind: kind, digest: row.digest)
                guard let plain = Sealing.open(row.sealed, nonce: row.nonce, key: current, associatedData: ad) else {
                    throw .integrityFailure(keyId: row.keyId)
                }
                let resealed = Sealing.seal(plain, key: new, associatedData: ad)
                try sql { () throws(SQLiteError) in
                    try db.run("UPDATE keyshares SET nonce = ?, sealed = ? WHERE key_id = ? AND slot = ?",
                               [.blob(resealed.nonce), .blob(resealed.sealed), .text(row.keyId), .integer(row.slot)])
                }
            }
            let presignatures = try sql { () throws(SQLiteError) -> [(id: [UInt8], keyId: String, gen: [UInt8], party: Int64, device: [UInt8], expiresAt: Int64, nonce: [UInt8], sealed: [UInt8])] in
                let select = try db.prepare(
                    "SELECT presig_id, key_id, gen, party, device_key, expires_at, nonce, sealed FROM presignatures")
                var rows: [([UInt8], String, [UInt8], Int64, [UInt8], Int64, [UInt8], [UInt8])] = []
                while try select.step() {
                    rows.append((try select.blob(0), try select.text(1), try select.blob(2), try select.integer(3),
                                 try select.blob(4), try select.integer(5), try select.blob(6), try select.blob(7)))
                }
                return rows
            }
            for row in presignatures {
                guard let party = UInt8(exactly: row.party) else { throw .integrityFailure(keyId: row.keyId) }
                let ad = Sealing.presignatureAssociatedData(id: row.id, keyId: row.keyId, gen: row.gen, party: party,
                                                            deviceKey: row.device, expiresAt: row.expiresAt)
                guard let plain = Sealing.open(row.sealed, nonce: row.nonce, key: current, associatedData: ad) else {
                    throw .integrityFailure(keyId: row.keyId)
                }
                let resealed = Sealing.seal(plain, key: new, associatedData: ad)
                try sql { () throws(SQLiteError) in
                    try db.run("UPDATE presignatures SET nonce = ?, sealed = ? WHERE presig_id = ?",
                               [.blob(resealed.nonce), .blob(resealed.sealed), .blob(row.id)])
                }
            }
            let check = Sealing.seal([], key: new, associatedData: Sealing.keyCheckAssociatedData)
            try sql { () throws(SQLiteError) in
                try db.run("UPDATE meta SET value = ? WHERE name = 'key_check'", [.blob(check.nonce + check.sealed)])
            }
            try store.audit(db, "rotate master key", keyId: nil, party: "operator",
                            outcome: "re-sealed \(shares.count) keyshares, \(presignatures.count) presignatures")
            return RotationReport(keyshares: shares.count, presignatures: presignatures.count)
        }
    }
}
