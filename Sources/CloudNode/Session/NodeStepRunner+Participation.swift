import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Stage 3 at a participating node: the protocol over the wire engine, then its ending — the share
/// commit (session.md §7.2, `NodeCommit` with the mode's policy), the app's DONE, the stored presignature (session.md §8), or
/// the export's DONE; or a reconcile (session.md §7.3, `NodeReconcile`).
extension NodeStepRunner {
    /// Runs the protocol and its ending. `leading`: frames sent with this node's first protocol messages
    /// (duo's ACCEPT). `relay`: what node A passes on meanwhile (nothing elsewhere).
    func participate(setup: ValidatedSetup, run: NodeProtocolRun, channel: inout PartyFrameChannel,
                     leading: [Frame], send: SessionDriver.Send, read: SessionDriver.Read,
                     relay: SessionDriver.Relay, owner: String) async -> NodeStepReport {
        await TestPause.reach(.running)
        // session.md §9.4: before each protocol step over the peers' messages — so before each flight after the first
        // (which follows the key-state ban check) — the ban table is read again inside the gate: a device
        // banned while its session runs gets nothing more, and its checks do not run.
        let gate = nodeBans.gate(for: setup)
        do throws(SilentShardError) {
            switch run {
            case .share(let run):
                let keyshare = try await SessionDriver.run(run, channel: &channel, leadingFrames: leading, send: send, read: read,
                                                           relay: relay, gate: gate)
                return await commit(keyshare, setup: setup, channel: &channel, send: send, read: read, relay: relay, owner: owner)
            case .signature(let run):
                let signature = try await SessionDriver.run(run, channel: &channel, leadingFrames: leading, send: send,
                                                            read: read, relay: relay, gate: gate)
                return await awaitDone(signature.done, channel: &channel, read: read, relay: relay)
            case .presignature(let run):
                let presignature = try await SessionDriver.run(run, channel: &channel, leadingFrames: leading, send: send,
                                                               read: read, relay: relay, gate: gate)
                return try await storePresignature(presignature, setup: setup, channel: &channel, send: send)
            case .exportShare(let run):
                _ = try await SessionDriver.run(run, channel: &channel, leadingFrames: leading, send: send, read: read,
                                                relay: relay, gate: gate)
                // session.md §5.2: the app reconstructs, then DONE; audit whether it came.
                let done = try? await SessionDriver.awaitControl(.done, from: 0, channel: &channel, read: read, relay: relay)
                return .exported(keyId: setup.payload.keyID?.hex ?? "", confirmed: done != nil)
            }
        } catch {
            if channel.peerAbort == nil, !Self.isLinkFailure(error),
               let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                try? await send([frame])
            }
            await nodeBans.banIfRequired(error, setup: setup)
            return .failed(error)
        }
    }

    /// session.md §7.2 at a node (`NodeCommit`). Duo (direct policy): the app's COMMIT(D) must match this node's own
    /// result; then one commit transaction, then OUTCOME(committed); a mismatch is RESULT_MISMATCH (nothing
    /// stored). Trio (prepared policy): stage PREPARED, send READY(D) to the other node, wait for the
    /// app's COMMIT(D) and the other node's READY(D), commit, send OUTCOME(committed); an ABORT from the
    /// other node before its READY, or from the app before its COMMIT, drops the PREPARED share
    /// (tombstone) → OUTCOME(aborted); anything else after READY leaves it PREPARED (in doubt, session.md §7.5).
    /// `owner`: the token subject recorded as a new key's owner in the commit transaction (session.md §9.2).
    func commit(_ keyshare: Keyshare, setup: ValidatedSetup, channel: inout PartyFrameChannel,
                send: SessionDriver.Send, read: SessionDriver.Read, relay: SessionDriver.Relay,
                owner: String) async -> NodeStepReport {
        let keyID = keyshare.keyID, gen = keyshare.gen
        let digest = channel.commitDigest(keyID: keyID, gen: gen)
        let keyId = keyshare.keyId
        let storeCalls = commitStore(NodeKeyshare(keyshare: keyshare, deviceIdentity: setup.deviceKey.identity, digest: digest),
                                     keyId: keyId, setup: setup, gen: gen, digest: digest, owner: owner)
        // A hard child's key id is not its parent's, the one SETUP names.
        let setupKeyID = setup.operation.row.newKeyID ? nil : setup.payload.keyID
        let policy = party.otherNode.map { NodeCommit.Policy.prepared(other: $0) } ?? .direct
        let commit = NodeCommit(policy: policy, keyID: keyID, gen: gen, digest: digest, setupKeyID: setupKeyID)
        switch await NodeCommitExecutor.run(commit, other: party.otherNode, channel: &channel, store: storeCalls, send: send,
                                            read: read, relay: relay) {
        case .committed: return .committed(keyId: keyId, gen: gen)
        case .aborted: return .aborted(keyId: keyId, gen: gen)
        case .inDoubt: return .inDoubt(keyId: keyId, gen: gen)
        case .failed(let error): return .failed(error)
        }
    }

    /// The store calls of a commit of `share`, by the mode's policy.
    private func commitStore(_ share: NodeKeyshare, keyId: String, setup: ValidatedSetup, gen: Generation, digest: [UInt8],
                             owner: String) -> NodeCommitExecutor.Store {
        let party = "device:" + Hex.encode(setup.deviceKey.identity)
        guard self.party.otherNode != nil else {
            // Duo: one transaction. The generation it replaces: refresh starts from SETUP's gen; keygen and
            // import create the key.
            let replacing = setup.operation == .refresh ? setup.payload.gen?.bytes : nil
            let holder = setup.instanceID
            return NodeCommitExecutor.Store(commit: { [self] () throws(NodeStoreError) in
                try await onStoreQueue { [store] () throws(NodeStoreError) in
                    try store.commitDirectly(keyId: keyId, share: share, replacing: replacing, party: party, owner: owner)
                }
            }, releaseLease: { [self] in
                // The commit is durable: release the key's lease before answering, so the app's next
                // share-changing step does not meet this session's lease (`run` releases it again, a no-op).
                try? await onStoreQueue { [store] () throws(NodeStoreError) in try store.releaseLease(keyId: keyId, holder: holder.bytes) }
            })
        }
        let rederivable = setup.operation.row.newKeyID
        // A hard child names its parent and the generation it came from (security review finding 1).
        let parent = rederivable
            ? setup.payload.keyID.flatMap { id in
                setup.payload.gen.map { (keyId: id.hex, gen: $0.bytes, path: setup.payload.path ?? []) }
            }
            : nil
        return NodeCommitExecutor.Store(prepare: { [self] () throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.prepare(keyId: keyId, share: share, party: party, rederivable: rederivable)
                } catch .alreadyDecided(let id) {
                    // The same generation is already CURRENT (a hard child derived again: the child is a
                    // deterministic function of the parent share and path): nothing new to stage; the
                    // commit is then a no-op on the decided generation.
                    guard try store.share(keyId: keyId)?.gen == gen.bytes else { throw .alreadyDecided(keyId: id) }
                }
            }
        }, commit: { [self] () throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                try store.commit(keyId: keyId, gen: gen.bytes, digest: digest, party: party, owner: owner, parent: parent)
            }
        }, drop: { [self] () throws(NodeStoreError) in
            // session.md §7.2 rule 4: the sender promised never to stage/commit this result; drop ours.
            try await onStoreQueue { [store] () throws(NodeStoreError) in try store.abort(keyId: keyId, gen: gen.bytes, party: party) }
        })
    }

    /// After its own finish a signer waits for the app's DONE (audit); a missing DONE is not an error.
    func awaitDone(_ own: DonePayload, channel: inout PartyFrameChannel, read: SessionDriver.Read,
                   relay: SessionDriver.Relay) async -> NodeStepReport {
        guard let frame = try? await SessionDriver.awaitControl(.done, from: 0, channel: &channel, read: read, relay: relay),
              let done = try? DonePayload(bytes: frame.payload)
        else { return .signed(confirmed: false) }
        return .signed(confirmed: done == own)
    }

    /// Reconcile (session.md §7.3) after ACCEPT carried `key_status`: the app's DONE, its COMMIT(g, D, context
    /// reconcile) — trio: commits a PREPARED g without READY (the app saw every node's signed status) —
    /// or its ABORT(rollback g), which tombstones g (serialized with any late commit of g by the store's
    /// transaction) and is answered with OUTCOME(aborted), or OUTCOME(committed) if g had been committed
    /// after all (`NodeReconcile`, the mode's policy).
    func reconcileRunning(_ setup: ValidatedSetup, channel: inout PartyFrameChannel, send: SessionDriver.Send,
                          read: SessionDriver.Read, relay: SessionDriver.Relay, owner: String) async -> NodeStepReport {
        guard let setupKeyID = setup.payload.keyID else { return .failed(.invalidInput(reason: "key id")) }
        let keyId = setupKeyID.hex
        let party = "device:" + Hex.encode(setup.deviceKey.identity)
        let storeCalls = NodeReconcileExecutor.Store(commit: { [self] (gen: Generation, digest: [UInt8]) throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.commit(keyId: keyId, gen: gen.bytes, digest: digest, party: party, owner: owner)
                    return (.committed, try store.share(keyId: keyId)?.gen)
                } catch .alreadyDecided {
                    return (.aborted, try store.share(keyId: keyId)?.gen)
                } catch .preparedMismatch {
                    let current = try store.share(keyId: keyId)?.gen
                    return (current == gen.bytes ? .committed : .inDoubt, current)
                }
            }
        }, rollback: { [self] (gen: Generation) throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.abort(keyId: keyId, gen: gen.bytes, party: party)
                    return (.aborted, try store.share(keyId: keyId)?.gen)
                } catch .alreadyDecided {
                    return (.committed, try store.share(keyId: keyId)?.gen)
                }
            }
        })
        let policy: NodeReconcile.Policy = self.party.mode == .duo ? .duo : .trio
        switch await NodeReconcileExecutor.run(NodeReconcile(policy: policy, keyID: setupKeyID), channel: &channel,
                                               store: storeCalls, send: send, read: read, relay: relay) {
        case .reconciled(let decision): return .reconciled(keyId: keyId, outcome: decision)
        case .failed(let error): return .failed(error)
        }
    }

    static func isLinkFailure(_ error: SilentShardError) -> Bool {
        if case .peerUnavailable = error { return true }
        return false
    }
}
