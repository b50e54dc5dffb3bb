import Foundation
import SilentShardCore

/// Keyshares: PREPARED → CURRENT commits, aborts, the decision log (session.md §7).
extension NodeShareStore {
    /// Stages `share` as PREPARED for `keyId` (session.md §7.2 rule 1: before sending READY). Idempotent for the
    /// same gen and digest; another PREPARED share is `preparedConflict`; a decided (key id, gen) is
    /// `alreadyDecided`. The CURRENT share is untouched.
    ///
    /// `rederivable`: the share is a deterministic function of its inputs (a hard-derived child:
    /// the same parent share and path always give the same key id, gen and share), so a failed earlier
    /// attempt must not block the next: a PREPARED share of the *same* gen under another digest is
    /// replaced, and an *aborted* decision for this gen is reopened (the tombstone's purpose — that the
    /// aborted session can never commit — still holds: its COMMIT names its own digest, which no longer
    /// matches the PREPARED one). A committed gen stays `alreadyDecided`; another gen stays a conflict.
    package func prepare(keyId: String, share: NodeKeyshare, party: String, rederivable: Bool = false) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try Self.require32(share.gen, "gen")
        guard let digest = share.digest else { throw .invalidArgument("a prepared share needs its digest") }
        try Self.require32(digest, "digest")
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            if let existing = try slotInfo(db, id, .prepared) {
                if existing.gen == share.gen, existing.digest == digest { return }
                guard rederivable, existing.gen == share.gen else { throw .preparedConflict(keyId: id) }
                try db.run("DELETE FROM keyshares WHERE key_id = ? AND slot = ? AND gen = ?",
                           [.text(id), .integer(Int64(NodeShareSlot.prepared.rawValue)), .blob(share.gen)])
                try insertShare(db, id, .prepared, share)
                try audit(db, "prepare", keyId: id, party: party, outcome: "re-prepared")
                return
            }
            switch try decision(db, id, share.gen) {
            case nil: break
            case .aborted? where rederivable:
                try db.run("DELETE FROM decisions WHERE key_id = ? AND gen = ?", [.text(id), .blob(share.gen)])
            default: throw .alreadyDecided(keyId: id)
            }
            try insertShare(db, id, .prepared, share)
            try audit(db, "prepare", keyId: id, party: party, outcome: "prepared")
        }
    }

    /// Commits the PREPARED share with this gen and digest (session.md §7.2 rule 3), in one transaction: it becomes
    /// CURRENT, the previous CURRENT and the presignatures of other generations are deleted, and the
    /// decision is logged. Committing an already committed gen again is a no-op (a retried COMMIT).
    ///
    /// `owner`: when the key has no CURRENT share yet (trio keygen, import, a hard-derived child), the
    /// token subject recorded as the key's owner in the same transaction (session.md §9.2); an
    /// existing key keeps its owner. A new key with an empty owner is `ownerRequired` (nothing written):
    /// a key is never stored without an owner (security review finding 11).
    ///
    /// `parent`: for a hard-derived child, the parent key, the generation it was derived from and the
    /// derivation path (SETUP's encoding, told back with KEY_RETIRED once the child is retired). The
    /// parent must still be CURRENT at that generation (else `staleGeneration` for the parent: a child
    /// of a generation that was replaced meanwhile never commits), and a new child records the link, so
    /// that the parent's next generation retires it (`makeCurrent`).
    ///
    /// A key that moves to a new generation (refresh, recover, reconcile) retires its hard-derived
    /// children in the same transaction (see `retireChildren`).
    package func commit(keyId: String, gen: [UInt8], digest: [UInt8], party: String,
                       owner: String, parent: (keyId: String, gen: [UInt8], path: [UInt8])? = nil) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try Self.require32(gen, "gen")
        try Self.require32(digest, "digest")
        var parentId: String?
        if let parent {
            parentId = try Self.canonicalKeyId(parent.keyId)
            try Self.require32(parent.gen, "parent gen")
        }
        try transaction { db throws(NodeStoreError) in
            // Parent before child: the order `retireChildren` takes them in.
            if let parentId { try db.lock(.key(parentId)) }
            try db.lock(.key(id))
            switch try decision(db, id, gen) {
            case .committed?: return
            case .aborted?: throw .alreadyDecided(keyId: id)
            case nil: break
            }
            guard let prepared = try loadShare(db, id, .prepared), prepared.gen == gen, prepared.digest == digest else {
                throw .preparedMismatch(keyId: id)
            }
            if let parentId, let parent, try currentGen(db, parentId) != parent.gen {
                throw .staleGeneration(keyId: parentId)
            }
            let isNew = try currentGen(db, id) == nil
            if isNew, owner.isEmpty { throw .ownerRequired(keyId: id) }
            try makeCurrent(db, id, prepared)
            if isNew { try recordOwner(db, id, owner) }
            if isNew, let parentId, let parent {
                try db.run("""
                    INSERT INTO key_parents (key_id, parent_key_id, created_at, path) VALUES (?, ?, ?, ?)
                    ON CONFLICT (key_id) DO UPDATE SET parent_key_id = excluded.parent_key_id, created_at = excluded.created_at,
                        path = excluded.path
                    """, [.text(id), .text(parentId), .integer(now), .blob(parent.path)])
            }
            try audit(db, "commit", keyId: id, party: party, outcome: "committed")
        }
    }

    /// Duo: stores a finished share directly as CURRENT in one transaction (session.md §7.2 rule 2, the app's
    /// COMMIT arrived before the node's protocol finished), with the same side effects as `commit`.
    /// Repeating it for the current gen is a no-op; a gen decided otherwise is `alreadyDecided`.
    ///
    /// `replacing` is the generation the session started from (refresh: SETUP's gen; keygen and
    /// import: nil, the key must not exist yet). If CURRENT changed meanwhile — a concurrent session
    /// on the same key committed first — the commit is refused with `currentChanged` and nothing is
    /// written: overwriting that generation would leave the app holding a share of a generation the
    /// node no longer has.
    ///
    /// `owner`: for a new key (`replacing` nil), the token subject recorded as the key's owner in the
    /// same transaction (session.md §9.2); later sessions with another subject are refused. Empty for a new
    /// key: `ownerRequired`, nothing written (finding 11).
    package func commitDirectly(keyId: String, share: NodeKeyshare, replacing: [UInt8]?,
                               party: String, owner: String) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try Self.require32(share.gen, "gen")
        if let digest = share.digest { try Self.require32(digest, "digest") }
        if let replacing { try Self.require32(replacing, "replaced gen") }
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            let current = try currentGen(db, id)
            switch try decision(db, id, share.gen) {
            case .committed? where current == share.gen: return  // a retried commit
            case nil: break
            default: throw .alreadyDecided(keyId: id)
            }
            guard current == replacing else { throw .currentChanged(keyId: id) }
            if let prepared = try slotInfo(db, id, .prepared), prepared.gen != share.gen {
                throw .preparedConflict(keyId: id)
            }
            if replacing == nil, owner.isEmpty { throw .ownerRequired(keyId: id) }
            try makeCurrent(db, id, share)
            if replacing == nil { try recordOwner(db, id, owner) }
            try audit(db, "commit", keyId: id, party: party, outcome: "committed directly")
        }
    }

    /// Drops the PREPARED share of `gen` (if any) and logs the gen as aborted (a tombstone). Aborting a
    /// committed gen is `alreadyDecided`; aborting twice is a no-op.
    package func abort(keyId: String, gen: [UInt8], party: String) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try Self.require32(gen, "gen")
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            switch try decision(db, id, gen) {
            case .aborted?: return
            case .committed?: throw .alreadyDecided(keyId: id)
            case nil: break
            }
            try db.run("DELETE FROM keyshares WHERE key_id = ? AND slot = ? AND gen = ?",
                       [.text(id), .integer(Int64(NodeShareSlot.prepared.rawValue)), .blob(gen)])
            try db.run("INSERT INTO decisions (key_id, gen, outcome, decided_at) VALUES (?, ?, ?, ?)",
                       [.text(id), .blob(gen), .integer(CommitDecision.aborted.rawValue), .integer(now)])
            try audit(db, "abort", keyId: id, party: party, outcome: "aborted")
        }
    }

    /// The decrypted share in `slot`, or nil. A row that fails authentication is `integrityFailure`.
    package func share(keyId: String, slot: NodeShareSlot = .current) throws(NodeStoreError) -> NodeKeyshare? {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) in try loadShare(db, id, slot) }
    }

    /// Generations held, without decrypting (reconcile's key status).
    /// The token subject that owns `keyId` (recorded at keygen/import), or nil.
    package func owner(keyId: String) throws(NodeStoreError) -> String? {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) -> String? in
            try db.first("SELECT subject FROM key_owners WHERE key_id = ?", [.text(id)])?.text(0)
        }
    }

    /// Who owns `keyId`, telling a key the node does not have from one it has without an owner (a row
    /// from before owners were recorded): authorization refuses the latter to everyone (finding 11).
    package func ownership(keyId: String) throws(NodeStoreError) -> KeyOwnership {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) -> KeyOwnership in
            if let subject = try db.first("SELECT subject FROM key_owners WHERE key_id = ?", [.text(id)])?.text(0) {
                return .owned(by: subject)
            }
            let held = try db.first("SELECT 1 FROM keyshares WHERE key_id = ? LIMIT 1", [.text(id)]) != nil
            if held { return .unowned }
            // A retired child stays its owner's: only the owner learns it was retired (KEY_RETIRED).
            if let subject = try db.first("SELECT subject FROM retired_keys WHERE key_id = ?", [.text(id)])?.text(0) {
                return .owned(by: subject)
            }
            return .unknownKey
        }
    }

    /// Deletes the tombstones of children retired more than ``retiredKeyRetention`` ago (second review
    /// finding 8: they were kept forever); their ids are then unknown keys. Part of `purgeExpired`.
    @discardableResult
    func purgeRetiredKeys(_ db: any StoreSQL) throws(NodeStoreError) -> Int {
        let retention = Int64(max(0, min(retiredKeyRetention, TimeInterval(Int64.max / 2))).rounded(.down))
        return try db.run("DELETE FROM retired_keys WHERE retired_at <= ?", [.integer(now - retention)])
    }

    /// A hard-derived child retired by its parent's new generation (finding 1): the parent key id and the
    /// derivation path (SETUP encoding), or nil if `keyId` is not a retired child.
    package func retirement(keyId: String) throws(NodeStoreError) -> (parentKeyId: String, path: [UInt8])? {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) -> (parentKeyId: String, path: [UInt8])? in
            guard let row = try db.first("SELECT parent_key_id, path FROM retired_keys WHERE key_id = ?", [.text(id)])
            else { return nil }
            return (try row.text(0), try row.blob(1))
        }
    }

    /// How many key ids have a CURRENT share (metrics, tests).
    package func keyCount() throws(NodeStoreError) -> Int {
        try reading { db throws(NodeStoreError) -> Int in
            Int(try db.first("SELECT count(*) FROM keyshares WHERE slot = ?",
                             [.integer(Int64(NodeShareSlot.current.rawValue))])?.integer(0) ?? 0)
        }
    }

    package func status(keyId: String) throws(NodeStoreError) -> NodeKeyStatus {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) in
            let current = try slotInfo(db, id, .current)
            let prepared = try slotInfo(db, id, .prepared)
            return NodeKeyStatus(currentGen: current?.gen, preparedGen: prepared?.gen, preparedDigest: prepared?.digest)
        }
    }

    /// The logged decision for (key id, gen), if any.
    package func decision(keyId: String, gen: [UInt8]) throws(NodeStoreError) -> CommitDecision? {
        let id = try Self.canonicalKeyId(keyId)
        return try reading { db throws(NodeStoreError) in try decision(db, id, gen) }
    }

    /// Deletes every share and presignature of a key (the decision log stays), in one transaction.
    package func deleteKey(keyId: String, party: String) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            try db.run("DELETE FROM keyshares WHERE key_id = ?", [.text(id)])
            try db.run("DELETE FROM presignatures WHERE key_id = ?", [.text(id)])
            try db.run("DELETE FROM key_owners WHERE key_id = ?", [.text(id)])
            try db.run("DELETE FROM key_parents WHERE key_id = ?", [.text(id)])
            try db.run("DELETE FROM retired_keys WHERE key_id = ?", [.text(id)])
            // Its children go too, without tombstones: there is no parent left to derive them from
            // again (they answer KEY_NOT_FOUND, not KEY_RETIRED).
            try retireChildren(db, of: id, leavingTombstones: false)
            try audit(db, "delete key", keyId: id, party: party, outcome: "deleted")
        }
    }

    // MARK: Rows

    /// The current gen of a key, read inside a transaction.
    func currentGen(_ db: any StoreSQL, _ keyId: String) throws(NodeStoreError) -> [UInt8]? {
        try slotInfo(db, keyId, .current)?.gen
    }

    /// Records the owner of a new key; a key created again under a retired key's id is no longer retired.
    private func recordOwner(_ db: any StoreSQL, _ keyId: String, _ owner: String) throws(NodeStoreError) {
        try db.run("DELETE FROM retired_keys WHERE key_id = ?", [.text(keyId)])
        try db.run("""
            INSERT INTO key_owners (key_id, subject, created_at) VALUES (?, ?, ?)
            ON CONFLICT (key_id) DO UPDATE SET subject = excluded.subject, created_at = excluded.created_at
            """, [.text(keyId), .text(owner), .integer(now)])
    }

    /// Security review finding 1 (session.md §12, dkls23.md §15): a hard-derived child's shares lie on its
    /// parent's polynomial of the generation it was derived from, bound to the device of that time. When
    /// the parent moves to another generation (refresh: a new polynomial; recover: maybe a new device),
    /// every child — and their children — is retired in the same transaction: shares, presignatures,
    /// owner and parent link are deleted (the decision log stays), so the old device's child share is
    /// worthless at this node. The app derives its children again from the parent's new generation.
    ///
    /// `leavingTombstones` false (the parent is deleted): no KEY_RETIRED tombstones, and earlier ones of the
    /// descendants are dropped.
    func retireChildren(_ db: any StoreSQL, of parentId: String, leavingTombstones: Bool = true) throws(NodeStoreError) {
        var pending = [parentId], seen: Set<String> = [parentId]
        while let parent = pending.popLast() {
            var children = try db.query("SELECT key_id FROM key_parents WHERE parent_key_id = ?", [.text(parent)])
                .map { row throws(NodeStoreError) in try row.text(0) }
            if !leavingTombstones {
                // Children retired earlier hang off this parent only by their tombstones.
                children += try db.query("SELECT key_id FROM retired_keys WHERE parent_key_id = ?", [.text(parent)])
                    .map { row throws(NodeStoreError) in try row.text(0) }
            }
            for child in children {
                guard seen.insert(child).inserted else { continue }
                try db.lock(.key(child))
                if leavingTombstones {
                    // The tombstone: the child's owner is told KEY_RETIRED with the parent and path to derive
                    // it again from (a key without an owner row would be nobody's: `unowned`).
                    try db.run("""
                        INSERT INTO retired_keys (key_id, parent_key_id, path, subject, retired_at)
                        SELECT p.key_id, p.parent_key_id, p.path, o.subject, ? FROM key_parents p
                        JOIN key_owners o ON o.key_id = p.key_id WHERE p.key_id = ?
                        ON CONFLICT (key_id) DO UPDATE SET parent_key_id = excluded.parent_key_id, path = excluded.path,
                            subject = excluded.subject, retired_at = excluded.retired_at
                        """, [.integer(now), .text(child)])
                } else {
                    try db.run("DELETE FROM retired_keys WHERE key_id = ?", [.text(child)])
                }
                try db.run("DELETE FROM keyshares WHERE key_id = ?", [.text(child)])
                try db.run("DELETE FROM presignatures WHERE key_id = ?", [.text(child)])
                try db.run("DELETE FROM key_owners WHERE key_id = ?", [.text(child)])
                try db.run("DELETE FROM key_parents WHERE key_id = ?", [.text(child)])
                try audit(db, "retire", keyId: child, party: nil, outcome: "parent \(parent) left the generation it was derived from")
                pending.append(child)
            }
        }
    }


    private func makeCurrent(_ db: any StoreSQL, _ keyId: String, _ share: NodeKeyshare) throws(NodeStoreError) {
        if let previous = try currentGen(db, keyId), previous != share.gen {
            try retireChildren(db, of: keyId)
        }
        try db.run("DELETE FROM keyshares WHERE key_id = ?", [.text(keyId)])
        try db.run("DELETE FROM presignatures WHERE key_id = ? AND gen <> ?", [.text(keyId), .blob(share.gen)])
        try db.run("INSERT INTO decisions (key_id, gen, outcome, decided_at) VALUES (?, ?, ?, ?)",
                   [.text(keyId), .blob(share.gen), .integer(CommitDecision.committed.rawValue), .integer(now)])
        try insertShare(db, keyId, .current, share)
    }

    private func insertShare(_ db: any StoreSQL, _ keyId: String, _ slot: NodeShareSlot,
                             _ share: NodeKeyshare) throws(NodeStoreError) {
        let digest = share.digest ?? []
        let ad = Sealing.shareAssociatedData(keyId: keyId, slot: slot, gen: share.gen, kind: share.kind.rawValue, digest: digest)
        let sealed = Sealing.seal(share.bytes, key: masterKey, associatedData: ad)
        try db.run("""
            INSERT INTO keyshares (key_id, slot, gen, kind, digest, nonce, sealed, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(keyId), .integer(Int64(slot.rawValue)), .blob(share.gen), .integer(Int64(share.kind.rawValue)),
                  .blob(digest), .blob(sealed.nonce), .blob(sealed.sealed), .integer(now)])
    }

    private func slotInfo(_ db: any StoreSQL, _ keyId: String,
                          _ slot: NodeShareSlot) throws(NodeStoreError) -> (gen: [UInt8], digest: [UInt8]?)? {
        guard let row = try db.first("SELECT gen, digest FROM keyshares WHERE key_id = ? AND slot = ?",
                                     [.text(keyId), .integer(Int64(slot.rawValue))]) else { return nil }
        let digest = try row.blob(1)
        return (try row.blob(0), digest.isEmpty ? nil : digest)
    }

    func loadShare(_ db: any StoreSQL, _ keyId: String, _ slot: NodeShareSlot) throws(NodeStoreError) -> NodeKeyshare? {
        guard let row = try db.first("SELECT gen, kind, digest, nonce, sealed FROM keyshares WHERE key_id = ? AND slot = ?",
                                     [.text(keyId), .integer(Int64(slot.rawValue))]) else { return nil }
        let gen = try row.blob(0), storedKind = try row.integer(1), digest = try row.blob(2)
        let nonce = try row.blob(3), sealedBytes = try row.blob(4)
        guard let rawKind = UInt8(exactly: storedKind), let kind = StoredShareKind(rawValue: rawKind) else {
            throw .integrityFailure(keyId: keyId)
        }
        let ad = Sealing.shareAssociatedData(keyId: keyId, slot: slot, gen: gen, kind: rawKind, digest: digest)
        guard let bytes = Sealing.open(sealedBytes, nonce: nonce, key: masterKey, associatedData: ad) else {
            throw .integrityFailure(keyId: keyId)
        }
        return NodeKeyshare(gen: gen, kind: kind, bytes: bytes, digest: digest.isEmpty ? nil : digest)
    }

    private func decision(_ db: any StoreSQL, _ keyId: String, _ gen: [UInt8]) throws(NodeStoreError) -> CommitDecision? {
        guard let row = try db.first("SELECT outcome FROM decisions WHERE key_id = ? AND gen = ?",
                                     [.text(keyId), .blob(gen)]) else { return nil }
        guard let decision = CommitDecision(rawValue: try row.integer(0)) else { throw .corrupt(reason: "unknown decision") }
        return decision
    }
}
