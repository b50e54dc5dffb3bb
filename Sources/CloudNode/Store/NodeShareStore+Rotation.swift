import Foundation
import SessionEngine

/// Master-key rotation: every sealed value (keyshares, presignature secrets, the key check) is opened
/// under the current key and sealed again under the new one with a fresh nonce, in **one**
/// transaction — a crash leaves the whole database under the old key, never half of it. The
/// associated data (which names each row's place) is unchanged, so moved rows still fail to open.
extension NodeShareStore {
    /// What a rotation re-sealed.
    package struct RotationReport: Sendable, Equatable {
        package var keyshares: Int
        package var presignatures: Int
    }

    /// Re-seals the SQLite database at `path` from `current` to `new` (see `rotateMasterKey(location:from:to:)`).
    package static func rotateMasterKey(path: String, from current: NodeMasterKey,
                                       to new: NodeMasterKey) throws(NodeStoreError) -> RotationReport {
        try rotateMasterKey(location: .sqlite(path: path), from: current, to: new)
    }

    /// Re-seals the database at `location` from `current` to `new`. Throws `wrongMasterKey` if
    /// `current` does not open it and `integrityFailure` if any row fails to open (nothing is changed
    /// then). Run it with every node process stopped (they hold the old key); afterwards start them
    /// with `new` and destroy `current`. On PostgreSQL the transaction also locks the sealed tables
    /// against writers, so a node left running cannot add a row under the old key meanwhile.
    package static func rotateMasterKey(location: NodeStoreLocation, from current: NodeMasterKey,
                                       to new: NodeMasterKey) throws(NodeStoreError) -> RotationReport {
        guard current.bytes != new.bytes else { throw .invalidArgument("the new master key equals the current one") }
        let store = try NodeShareStore(location: location, masterKey: current)
        return try store.transaction { db throws(NodeStoreError) -> RotationReport in
            if db.dialect == .postgres {
                try db.execute("LOCK TABLE meta, keyshares, presignatures IN EXCLUSIVE MODE")
            }
            let shares = try db.query("SELECT key_id, slot, gen, kind, digest, nonce, sealed FROM keyshares", [])
            for row in shares {
                let keyId = try row.text(0), storedSlot = try row.integer(1), gen = try row.blob(2)
                let storedKind = try row.integer(3), digest = try row.blob(4), nonce = try row.blob(5), sealed = try row.blob(6)
                guard let slot = UInt8(exactly: storedSlot).flatMap(NodeShareSlot.init(rawValue:)),
                      let kind = UInt8(exactly: storedKind)
                else { throw .integrityFailure(keyId: keyId) }
                let ad = Sealing.shareAssociatedData(keyId: keyId, slot: slot, gen: gen, kind: kind, digest: digest)
                guard let plain = Sealing.open(sealed, nonce: nonce, key: current, associatedData: ad) else {
                    throw .integrityFailure(keyId: keyId)
                }
                let resealed = Sealing.seal(plain, key: new, associatedData: ad)
                try db.run("UPDATE keyshares SET nonce = ?, sealed = ? WHERE key_id = ? AND slot = ?",
                           [.blob(resealed.nonce), .blob(resealed.sealed), .text(keyId), .integer(storedSlot)])
            }
            let presignatures = try db.query(
                "SELECT presig_id, key_id, gen, party, device_key, expires_at, nonce, sealed FROM presignatures", [])
            for row in presignatures {
                let id = try row.blob(0), keyId = try row.text(1), gen = try row.blob(2), storedParty = try row.integer(3)
                let device = try row.blob(4), expiresAt = try row.integer(5), nonce = try row.blob(6), sealed = try row.blob(7)
                guard let party = UInt8(exactly: storedParty) else { throw .integrityFailure(keyId: keyId) }
                let ad = Sealing.presignatureAssociatedData(id: id, keyId: keyId, gen: gen, party: party,
                                                            deviceKey: device, expiresAt: expiresAt)
                guard let plain = Sealing.open(sealed, nonce: nonce, key: current, associatedData: ad) else {
                    throw .integrityFailure(keyId: keyId)
                }
                let resealed = Sealing.seal(plain, key: new, associatedData: ad)
                try db.run("UPDATE presignatures SET nonce = ?, sealed = ? WHERE presig_id = ?",
                           [.blob(resealed.nonce), .blob(resealed.sealed), .blob(id)])
            }
            let check = Sealing.seal([], key: new, associatedData: Sealing.keyCheckAssociatedData)
            try db.run("UPDATE meta SET value = ? WHERE name = 'key_check'", [.blob(check.nonce + check.sealed)])
            try store.audit(db, "rotate master key", keyId: nil, party: "operator",
                            outcome: "re-sealed \(shares.count) keyshares, \(presignatures.count) presignatures")
            return RotationReport(keyshares: shares.count, presignatures: presignatures.count)
        }
    }
}
