import Foundation
import MPCCrypto
import SessionEngine

/// Presignatures: stored sealed, consumed at most once (session.md §8.2–8.3).
extension NodeShareStore {
    /// Stores a presignature half in one transaction (before STORED is sent). Refused for a banned
    /// device (`banned`), a gen that is not the key's current one (`staleGeneration`), past the
    /// per-key quota (`presignatureLimit`) or for a reused id (`duplicatePresignature`).
    package func storePresignature(_ presignature: NodePresignature) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(presignature.keyId)
        try Self.require32(presignature.id, "presignature id")
        try Self.require32(presignature.gen, "gen")
        let expiresAt = Int64(presignature.expiresAt.timeIntervalSince1970.rounded(.down))
        let ad = Sealing.presignatureAssociatedData(id: presignature.id, keyId: id, gen: presignature.gen,
                                                    party: presignature.party, deviceKey: presignature.deviceKey,
                                                    expiresAt: expiresAt)
        let sealed = Sealing.seal(presignature.secret, key: masterKey, associatedData: ad)
        let party = "node \(presignature.party)"
        do {
            try transaction { db throws(NodeStoreError) in
                try db.lock(.key(id))
                try db.lock(.device(presignature.deviceKey))
                guard try !isBanned(db, presignature.deviceKey) else { throw .banned }
                guard try currentGen(db, id) == presignature.gen else { throw .staleGeneration(keyId: id) }
                // Expired halves are useless: dropped here, so they never hold the key's quota
                // (security review finding 9).
                try db.run("DELETE FROM presignatures WHERE key_id = ? AND expires_at <= ?", [.text(id), .integer(now)])
                let count = try db.first("SELECT count(*) FROM presignatures WHERE key_id = ?", [.text(id)])?.integer(0) ?? 0
                let exists = try db.first("""
                    SELECT 1 FROM presignatures WHERE presig_id = ?
                    UNION ALL SELECT 1 FROM finish_records WHERE presig_id = ?
                    """, [.blob(presignature.id), .blob(presignature.id)]) != nil
                guard !exists else { throw .duplicatePresignature }
                guard count < presignatureLimit else { throw .presignatureLimit(keyId: id) }
                do throws(NodeStoreError) {
                    try db.run("""
                        INSERT INTO presignatures (presig_id, key_id, gen, party, device_key, expires_at, created_at, nonce, sealed, epoch)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT value FROM meta WHERE name = 'presign_epoch'))
                        """, [.blob(presignature.id), .text(id), .blob(presignature.gen), .integer(Int64(presignature.party)),
                              .blob(presignature.deviceKey), .integer(expiresAt), .integer(now),
                              .blob(sealed.nonce), .blob(sealed.sealed)])
                } catch .postgres(sqlState: PostgresError.uniqueViolation, _) {
                    throw .duplicatePresignature  // the same id stored concurrently for another key
                }
                try audit(db, "presign store", keyId: id, party: party, outcome: "stored")
            }
        } catch {
            auditSeparately("presign store", keyId: id, party: party, outcome: "refused: \(error)")
            throw error
        }
    }

    /// Answers a FINAL_REQUEST for presignature `presignatureId` (session.md §8.3) in one transaction that
    /// starts by deleting the row (`DELETE … RETURNING`), so of concurrent requests — any threads, any
    /// processes sharing the database — exactly one gets the row; the others wait for its transaction
    /// and then find no row:
    ///
    /// 1. No row: a finish record with the same `requestHash` → `.replayed` (nothing consumed); with
    ///    another hash → `presignatureConsumed`; none → `presignatureNotFound`.
    /// 2. Row taken: it must authenticate (`integrityFailure`), not be expired at `now`
    ///    (`presignatureExpired`), its device not banned (`banned`), its gen still current
    ///    (`staleGeneration`); a refusal rolls back, so the row stays.
    /// 3. `finish` gets the decrypted secret and returns the response bytes. If it throws (bad
    ///    authenticator, policy denied), everything rolls back and the row stays; its error is rethrown
    ///    unchanged. `finish` runs at most once per call (this transaction is never retried).
    /// 4. A finish record (request hash, response) is inserted; then commit.
    ///
    /// Throws `NodeStoreError` or `finish`'s own error.
    package func consumePresignature(
        id presignatureId: [UInt8], requestHash: [UInt8],
        finish: (_ secret: [UInt8], _ presignature: NodePresignature) throws -> [UInt8]
    ) throws -> PresignatureFinish {
        try Self.require32(presignatureId, "presignature id")
        try Self.require32(requestHash, "request hash")
        var finishError: (any Error)?
        var keyIdForAudit: String?
        var witness: StoreWitness.Content?
        do {
            try checkRestoreIfDue()
            let finished = try transaction(retryable: false) { db throws(NodeStoreError) -> PresignatureFinish in
                let timestamp = now
                // Second review finding 1: a row of an older epoch (restored from a backup) is refused.
                witness = try restoreFenceCheck(db, presignatureId: presignatureId)
                guard let row = try takePresignature(db, presignatureId) else {
                    guard let record = try db.first(
                        "SELECT key_id, request_hash, response FROM finish_records WHERE presig_id = ?", [.blob(presignatureId)])
                    else { throw .presignatureNotFound }
                    let keyId = try record.text(0)
                    keyIdForAudit = keyId
                    guard constantTimeEqual(try record.blob(1), requestHash) else { throw .presignatureConsumed }
                    try audit(db, "presign final", keyId: keyId, party: nil, outcome: "replayed")
                    return .replayed(response: try record.blob(2))
                }
                keyIdForAudit = row.presignature.keyId
                let ad = Sealing.presignatureAssociatedData(
                    id: presignatureId, keyId: row.presignature.keyId, gen: row.presignature.gen,
                    party: row.presignature.party, deviceKey: row.presignature.deviceKey, expiresAt: row.expiresAt)
                guard let secret = Sealing.open(row.sealed, nonce: row.nonce, key: masterKey, associatedData: ad) else {
                    throw .integrityFailure(keyId: row.presignature.keyId)
                }
                guard timestamp < row.expiresAt else { throw .presignatureExpired }
                guard try !isBanned(db, row.presignature.deviceKey) else { throw .banned }
                guard try currentGen(db, row.presignature.keyId) == row.presignature.gen else {
                    throw .staleGeneration(keyId: row.presignature.keyId)
                }
                let response: [UInt8]
                do {
                    response = try finish(secret, row.presignature)
                } catch {
                    finishError = error
                    // Rolls the transaction back; the catch below rethrows `finish`'s own error.
                    throw .invalidArgument("finish rejected")
                }
                let retainedUntil = timestamp + Int64(finishRecordRetention)
                try db.run("""
                    INSERT INTO finish_records (presig_id, key_id, request_hash, response, expires_at)
                    VALUES (?, ?, ?, ?, ?)
                    """, [.blob(presignatureId), .text(row.presignature.keyId), .blob(requestHash), .blob(response),
                          .integer(retainedUntil)])
                try audit(db, "presign final", keyId: row.presignature.keyId,
                          party: "node \(row.presignature.party)", outcome: "consumed")
                return .finished(response: response)
            }
            witnessCommitted(witness)  // after the commit only: the witness is never ahead of the database
            return finished
        } catch {
            if let finishError {
                auditSeparately("presign final", keyId: keyIdForAudit, party: nil, outcome: "refused by finish")
                throw finishError
            }
            // No line for an id with neither row nor record: nothing was touched (security review 2, finding 4).
            if case .presignatureNotFound = error { throw error }
            auditSeparately("presign final", keyId: keyIdForAudit, party: nil, outcome: "refused: \(error)")
            throw error
        }
    }

    /// The key id of a stored presignature (nil if there is no row): lets the caller load the key's
    /// share before `consumePresignature` (the row's key id and gen are checked again inside it).
    package func presignatureKeyId(id presignatureId: [UInt8]) throws(NodeStoreError) -> String? {
        try Self.require32(presignatureId, "presignature id")
        return try reading { db throws(NodeStoreError) -> String? in
            try db.first("SELECT key_id FROM presignatures WHERE presig_id = ?", [.blob(presignatureId)])?.text(0)
        }
    }

    /// Number of stored (unused) presignatures of a key, expired ones included until they are purged.
    package func presignatureCount(keyId: String) throws(NodeStoreError) -> Int {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) -> Int in
            Int(try db.first("SELECT count(*) FROM presignatures WHERE key_id = ?", [.text(id)])?.integer(0) ?? 0)
        }
    }

    /// Runs `purgeExpired` every `interval` on its own thread until the returned task is cancelled (the
    /// node's garbage collection of expired presignatures and finish records past retention), and deletes
    /// audit lines older than `auditRetention` seconds (0: kept forever).
    package func startPurging(every interval: Duration, auditRetention: TimeInterval = NodeShareStore.defaultAuditRetention,
                              log: @escaping @Sendable (String) -> Void = { _ in }) -> Task<Void, Never> {
        let queue = NodeStoreQueues(label: "silentshard.store.purge", width: 1)
        return Task.detached { [self] in
            while !Task.isCancelled {
                guard (try? await Task.sleep(for: interval)) != nil else { return }
                do {
                    let purged = try await queue.run { () throws(NodeStoreError) in try self.purgeExpired() }
                    if purged > 0 { log("purged \(purged) expired presignature(s)") }
                    let lines = try await queue.run { () throws(NodeStoreError) in try self.purgeAuditLog(olderThan: auditRetention) }
                    if lines > 0 { log("purged \(lines) audit line(s) past retention") }
                } catch {
                    log("presignature purge failed: \(error)")
                }
            }
        }
    }

    /// Garbage collection: deletes expired presignatures, finish records past retention, device check leases
    /// left by crashed processes (`NodeShareStore+DeviceCheckLeases`) and retired-key tombstones past theirs (``retiredKeyRetention``); returns
    /// how many presignatures were deleted.
    @discardableResult
    package func purgeExpired() throws(NodeStoreError) -> Int {
        try transaction { db throws(NodeStoreError) -> Int in
            let timestamp = now
            let deleted = try db.run("DELETE FROM presignatures WHERE expires_at <= ?", [.integer(timestamp)])
            try db.run("DELETE FROM finish_records WHERE expires_at <= ?", [.integer(timestamp)])
            let leaseNow = self.leaseNow
            try db.run("DELETE FROM device_check_leases WHERE expires_at <= \(leaseNow.sql)", [.integer(leaseNow.value)])
            try purgeRetiredKeys(db)
            try audit(db, "presign gc", keyId: nil, party: nil, outcome: "deleted \(deleted)")
            return deleted
        }
    }

    /// Deletes the presignature row and returns it (the row lock makes concurrent takers wait).
    private func takePresignature(_ db: any StoreSQL, _ id: [UInt8]) throws(NodeStoreError)
        -> (presignature: NodePresignature, expiresAt: Int64, nonce: [UInt8], sealed: [UInt8])? {
        guard let row = try db.first("""
            DELETE FROM presignatures WHERE presig_id = ?
            RETURNING key_id, gen, party, device_key, expires_at, nonce, sealed
            """, [.blob(id)]) else { return nil }
        let expiresAt = try row.integer(4)
        let party = try row.integer(2)
        // A party outside 0…255 cannot authenticate (the AD binds the byte), but reject it plainly.
        guard party >= 0 && party <= 255 else { throw .corrupt(reason: "party out of range") }
        let presignature = NodePresignature(
            id: id, keyId: try row.text(0), gen: try row.blob(1), party: UInt8(party), deviceKey: try row.blob(3),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAt)), secret: [])
        return (presignature, expiresAt, try row.blob(5), try row.blob(6))
    }
}
