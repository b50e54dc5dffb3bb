import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// How a trio node step ended (for logs, metrics and tests; no secrets).
package enum TrioStepReport: Sendable, Equatable {
    /// The SETUP was refused with this code (REJECT sent, or B's REJECT relayed).
    case rejected(WireCode)
    /// Node A relayed a session it does not take part in (S = {0, 2}); `completed` says whether the
    /// app's DONE passed through.
    case relayed(completed: Bool)
    /// A share-changing step committed this key id and generation (PREPARED → CURRENT).
    case committed(keyId: String, gen: [UInt8])
    /// The staged result was dropped (tombstone aborted) on the app's or the other node's ABORT.
    case aborted(keyId: String, gen: [UInt8])
    /// READY was sent but the commit condition never held: the share stays PREPARED (§7.5).
    case inDoubt(keyId: String, gen: [UInt8])
    /// A signing step finished; `confirmed` says whether the app's DONE carried the same signature.
    case signed(confirmed: Bool)
    /// A preSign step stored this node's presignature half (STORED sent).
    case presignatureStored(keyId: String)
    /// An export step sent this node's share to the app; `confirmed` says whether the app's DONE came.
    case exported(keyId: String, confirmed: Bool)
    /// A reconcile ended: with the app's DONE (`outcome` nil), or its COMMIT / rollback answered
    /// with this decision.
    case reconciled(keyId: String, outcome: CommitDecision?)
    /// The step ended without a result.
    case failed(SilentShardError)
}

/// The node half of trio steps (`specs/session.md` §4.3, §5.4, §6, §7.2) for keygen, refresh and
/// sign (ECDSA/DKLs23 and EdDSA/FROST), on either role:
///
/// * node A (`run(connection:route:token:)`): validates the app's SETUP (§4.3 steps 1–11), opens a
///   link to B when B participates (LINK_OPEN, then the SETUP byte for byte, §2.3, §6.1 rule 3),
///   waits for B's ACCEPT (or relays B's REJECT), then takes part in and relays the session: frames
///   between the app and B pass unchanged in each sender's order; A consumes what is addressed to it.
///   A session with S = {0, 2} is relayed only. If the link to B fails, A answers
///   REJECT(PEER_UNAVAILABLE), also after ACCEPTs.
/// * node B (`serveLink(connection:)`): checks LINK_OPEN (certificate under the cluster key, group,
///   signature, time), validates the relayed SETUP entirely itself, and runs its side over the link.
///
/// Share results follow §7.2: each node stages its share as PREPARED (with D) and only then sends
/// READY(D) to the other node; it commits iff it holds the app's COMMIT(D) and the other node's
/// READY(D), then sends OUTCOME(committed). MPC rounds run on `SessionCompute`'s queue, store calls on
/// this runner's serial queue — never on Swift's cooperative pool.
package final class TrioStepRunner: Sendable {
    /// The node's role, key, certificate and cluster key.
    package let identity: TrioNodeIdentity
    let store: NodeShareStore
    let peer: (any TrioPeerConnector)?
    let replay: LockedValue<ReplayWindow>
    let storeQueue = NodeStoreQueues(label: "silentshard.node.trio.store")
    /// How long a share-changing step or reconcile holds its key's lease at this node (§7.2).
    let leaseSeconds: Int64

    /// The admission stages every node runs (`NodeAdmission`).
    var admission: NodeAdmission {
        NodeAdmission(store: store, queue: storeQueue, rateLimiter: rateLimiter, leaseSeconds: leaseSeconds,
                      replayRetentionMilliseconds: replay.withLock { $0.retentionMilliseconds })
    }
    let clock: @Sendable () -> UInt64
    /// Devices this process banned (§9.4), before and until the store has them (finding 12).
    let bans = DeviceBanLedger()
    let setupTimeout: Duration
    let frameTimeout: Duration
    /// Keyshares decoded and validated by earlier steps (a signing key is not re-validated per signature).
    let keyshares = NodeKeyshareCache()
    /// Node B's check of the forwarded app token: the verdict and, with a verifier, the principal.
    let tokenCheck: @Sendable ([UInt8]?) async -> (SetupValidationContext.TokenVerdict, Principal?)
    /// §9.5 limits on principals, device keys and keys (the server's, shared), or nil.
    let rateLimiter: NodeRateLimiter?

    /// Operations served in this increment.
    static let servedOperations: Set<SessionOperation> = [.keygen, .refresh, .sign, .preSign, .export, .recover, .reconcile,
                                                                    .import, .hardDerivation]

    /// - Parameters:
    ///   - identity: the node's role, key, certificate and the cluster key.
    ///   - store: the node's own share store (each node has its own database).
    ///   - peer: node A's way to open a link to B (nil at B).
    ///   - replayWindow: the SETUP replay store (§9.6).
    ///   - tokenVerdict: node B's own check of the app token A forwards in LINK_OPEN (§6.1 rule 3);
    ///     node A's server checks the token before `run` (the default accepts every token). No
    ///     principal, so B checks no scopes or owner with it; prefer `tokenVerifier`.
    ///   - tokenVerifier: when set, node B verifies the forwarded token with it (replacing
    ///     `tokenVerdict`) and authorizes with the principal it gives (scopes, key owner, device
    ///     binding, §9.1–9.3), like A does with its server's principal.
    ///   - clock: node time in ms since the Unix epoch.
    ///   - setupTimeout, frameTimeout: §5.4 deadlines (SETUP, each expected frame).
    ///   - rateLimiter: §9.5 limits (give the server's `NodeServerConfiguration.rateLimiter`); nil: none.
    package init(identity: TrioNodeIdentity, store: NodeShareStore, peer: (any TrioPeerConnector)?,
                replayWindow: ReplayWindow,
                tokenVerdict: @escaping @Sendable ([UInt8]?) async -> SetupValidationContext.TokenVerdict = { _ in .accepted },
                tokenVerifier: (any TokenVerifier)? = nil,
                clock: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) },
                setupTimeout: Duration = .milliseconds(Int64(SessionConstants.setupTimeoutMilliseconds)),
                frameTimeout: Duration = .milliseconds(Int64(SessionConstants.frameTimeoutMilliseconds)),
                leaseDuration: Duration = .seconds(300), rateLimiter: NodeRateLimiter? = nil) {
        self.rateLimiter = rateLimiter
        leaseSeconds = max(1, leaseDuration.components.seconds)
        self.identity = identity
        self.store = store
        self.peer = peer
        replay = LockedValue(replayWindow)
        if let tokenVerifier {
            tokenCheck = { token in
                // The forwarded token is outside input: only a well-formed b64token reaches the verifier.
                if let token, !BearerToken.isWellFormed(bytes: token) { return (.invalid, nil) }
                do {
                    let principal = try await tokenVerifier.verify(token: token.map { String(decoding: $0, as: UTF8.self) })
                    return (.accepted, principal)
                } catch AuthenticationError.missingToken {
                    return (.missing, nil)
                } catch {
                    return (.invalid, nil)
                }
            }
        } else {
            tokenCheck = { token in (await tokenVerdict(token), nil) }
        }
        self.clock = clock
        self.setupTimeout = setupTimeout
        self.frameTimeout = frameTimeout
    }

    // MARK: - SETUP steps 9–10, machines

    /// §4.3 steps 9–10 from the store: bans, key existence with the route's algorithm, the registered
    /// device, `gen` = current, no PREPARED share blocking a share change. A relay-only node A checks
    /// bans only (step 10 concerns participants).
    /// `rebind`: a recover authorized to register SETUP's (new) device key (§9.3); the registered
    /// device is then not required.
    func keyState(_ setup: ValidatedSetup, rebind: Bool = false) async throws(SetupRejection) -> NodeKeyshare? {
        let deviceIdentity = setup.deviceKey.identity
        let keyID = setup.payload.keyID.map { Hex.encode($0) }
        let expectedKind = StoredShareKind(setup.algorithm)
        let state: (banned: Bool, share: NodeKeyshare?, status: NodeKeyStatus?, retired: (parentKeyId: String, path: [UInt8])?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                let banned = try store.isBanned(deviceKey: deviceIdentity)
                guard let keyID else { return (banned, nil, nil, nil) }
                let share = try store.share(keyId: keyID)
                return (banned, share, try store.status(keyId: keyID), share == nil ? try store.retirement(keyId: keyID) : nil)
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        if state.banned || bans.contains(deviceIdentity) { throw SetupRejection(.banned) }
        guard !setup.isRelayOnly, setup.operation != .keygen else { return nil }
        if setup.operation == .import {
            // §4.2: key_id is the protocol key id of public_key; §9.2: refused if the key id exists.
            guard let keyIDBytes = setup.payload.keyID, let publicKey = setup.payload.publicKey,
                  Self.protocolKeyID(publicKey, algorithm: setup.algorithm) == keyIDBytes
            else { throw SetupRejection(.invalidParameter) }
            guard state.share == nil, state.status?.preparedGen == nil else { throw SetupRejection(.keyExists) }
            return nil
        }
        if state.share == nil, let retired = state.retired, let parent = try? Hex.decode(retired.parentKeyId) {
            // Finding 1: a hard-derived child retired by its parent's new generation. The owner (only the
            // owner gets this far) learns which parent and path to derive it from again.
            throw SetupRejection(.keyRetired, detail: KeyRetiredDetail(parentKeyID: parent, path: retired.path).encoded)
        }
        guard let share = state.share, share.kind == expectedKind else {
            // §6.3: a signer without its share answers SIGNER_UNAVAILABLE so the app can use the other node.
            throw SetupRejection(setup.operation == .sign || setup.operation == .preSign ? .signerUnavailable : .keyNotFound)
        }
        guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw SetupRejection(.internalError) }
        guard blob.deviceIdentity == deviceIdentity || (rebind && setup.operation == .recover) else {
            throw SetupRejection(.deviceNotRegistered)
        }
        if setup.operation == .recover {
            // §6.4: recover only a key this node holds current; key_id is the protocol key id of the
            // expected public key, which must be this key's (no gen: the app lost its share).
            guard let keyIDBytes = setup.payload.keyID, let publicKey = setup.payload.publicKey,
                  Self.protocolKeyID(publicKey, algorithm: setup.algorithm) == keyIDBytes
            else { throw SetupRejection(.invalidParameter) }
            if state.status?.preparedGen != nil { throw SetupRejection(.reconcileRequired) }
            return share
        }
        guard share.gen == setup.payload.gen else { throw SetupRejection(.staleGeneration, detail: share.gen) }
        if setup.operation.changesShares, state.status?.preparedGen != nil { throw SetupRejection(.reconcileRequired) }
        return share
    }

    func makeRun(_ setup: ValidatedSetup, current: NodeKeyshare?) throws -> NodeProtocolRun {
        let algorithm = setup.algorithm
        let keyshare = try current.map {
            try keyshares.keyshare(algorithm: algorithm, mode: .trio,
                                   protocolBytes: try NodeShareBlob(bytes: $0.bytes).protocolBytes, groupId: identity.groupID)
        }
        var rng = SessionRandomness.system.generator()
        return try NodeProtocolRun.make(for: setup, party: .init(index: identity.index, mode: .trio, groupID: identity.groupID),
                                        keyshare: keyshare, using: &rng)
    }

    /// The protocol key id of a SETUP public key (nil if it does not decode).
    static func protocolKeyID(_ publicKey: [UInt8], algorithm: SessionAlgorithm) -> [UInt8]? {
        switch algorithm {
        case .ecdsa:
            guard let point = try? Secp256k1.Point(compressed: publicKey) else { return nil }
            return try? DKLsDKG.keyId(for: point)
        case .eddsa:
            guard let point = try? FROST.Point(bytes: publicKey) else { return nil }
            return FROST.keyId(for: point)
        }
    }

    /// How this node trusts node keys: the cluster key, its own group.
    func trust(now: UInt64) -> FrameReceiver.NodeTrust {
        FrameReceiver.NodeTrust(cloudKey: identity.clusterKey, nowSeconds: now / 1000, recordedGroupID: identity.groupID)
    }

    func acceptPayload(_ setup: ValidatedSetup, keys: SessionKeyPair, now: UInt64, status: KeyStatus? = nil) -> AcceptPayload {
        AcceptPayload(setupHash: setup.setupHash, nodeKey: identity.nodeKey.verifyingKey, certificate: identity.certificate,
                      sessionKeys: keys.publicKeys, nodeTime: now, keyStatus: status)
    }

    // MARK: - Commit (§7.2, trio)

    /// §7.2 at a trio node (`NodeCommit`, prepared policy): stage PREPARED, send READY(D) to the other
    /// node, wait for the app's COMMIT(D) and the other node's READY(D), commit, send OUTCOME(committed).
    /// An ABORT from the other node before its READY, or from the app before its COMMIT, drops the
    /// PREPARED share (tombstone) → OUTCOME(aborted). Anything else after READY leaves the share
    /// PREPARED (in doubt, §7.5). `owner`: the token subject recorded as a new key's owner in the commit
    /// transaction (§9.2).
    func commit(_ keyshare: Keyshare, setup: ValidatedSetup, channel: inout PartyFrameChannel,
                send: SessionDriver.Send, read: SessionDriver.Read, relay: SessionDriver.Relay,
                owner: String) async -> TrioStepReport {
        let keyID = keyshare.keyIdBytes, gen = [UInt8](keyshare.generation)
        let digest = channel.commitDigest(keyID: keyID, gen: gen)
        let share = NodeKeyshare(keyshare: keyshare, deviceIdentity: setup.deviceKey.identity, digest: digest)
        let party = "device:" + Hex.encode(setup.deviceKey.identity)
        let keyId = keyshare.keyId
        let rederivable = setup.operation == .hardDerivation
        // A hard child names its parent and the generation it came from (security review finding 1).
        let parent = rederivable
            ? setup.payload.keyID.flatMap { id in
                setup.payload.gen.map { (keyId: Hex.encode(id), gen: $0, path: setup.payload.path ?? []) }
            }
            : nil
        let storeCalls = NodeCommitExecutor.Store(prepare: { [self] () throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.prepare(keyId: keyId, share: share, party: party, rederivable: rederivable)
                } catch .alreadyDecided(let id) {
                    // The same generation is already CURRENT (a hard child derived again: the child is a
                    // deterministic function of the parent share and path): nothing new to stage; the
                    // commit below is then a no-op on the decided generation.
                    guard try store.share(keyId: keyId)?.gen == gen else { throw .alreadyDecided(keyId: id) }
                }
            }
        }, commit: { [self] () throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                try store.commit(keyId: keyId, gen: gen, digest: digest, party: party, owner: owner, parent: parent)
            }
        }, drop: { [self] () throws(NodeStoreError) in
            // §7.2 rule 4: the sender promised never to stage/commit this result; drop ours.
            try await onStoreQueue { [store] () throws(NodeStoreError) in try store.abort(keyId: keyId, gen: gen, party: party) }
        })
        let commit = NodeCommit(policy: .prepared(other: identity.peerIndex), keyID: keyID, gen: gen, digest: digest,
                                setupKeyID: nil)
        switch await NodeCommitExecutor.run(commit, other: identity.peerIndex, channel: &channel, store: storeCalls, send: send,
                                            read: read, relay: relay) {
        case .committed: return .committed(keyId: keyId, gen: gen)
        case .aborted: return .aborted(keyId: keyId, gen: gen)
        case .inDoubt: return .inDoubt(keyId: keyId, gen: gen)
        case .failed(let error): return .failed(error)
        }
    }

    /// After its own finish a signer waits for the app's DONE (audit); a missing DONE is not an error.
    func awaitDone(_ own: DonePayload, channel: inout PartyFrameChannel, read: SessionDriver.Read,
                   relay: SessionDriver.Relay) async -> TrioStepReport {
        guard let frame = try? await SessionDriver.awaitControl(.done, from: 0, channel: &channel, read: read, relay: relay),
              let done = try? DonePayload(bytes: frame.payload)
        else { return .signed(confirmed: false) }
        return .signed(confirmed: done == own)
    }

    /// Runs the protocol and its ending (commit, DONE, the stored presignature) for a participating node.
    func participate(setup: ValidatedSetup, run: NodeProtocolRun, channel: inout PartyFrameChannel,
                     leading: [Frame], send: SessionDriver.Send, read: SessionDriver.Read,
                     relay: SessionDriver.Relay, owner: String) async -> TrioStepReport {
        await TestPause.reach(.running)
        // §9.4: before each protocol step over the peers' messages — so before each flight after the first
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
                switch presignature {
                case .ecdsa(let presignature):
                    guard let bytes = try? presignature.serialized() else { throw .invalidInput(reason: "presignature") }
                    return await storePresignature(version: Self.dklsPresignatureVersion, body: bytes, setup: setup,
                                                   channel: &channel, send: send)
                case .eddsa(let frost):
                    guard let bytes = try? frost.presignature.serialized(), frost.peer == 0 else {
                        throw .invalidInput(reason: "presignature")
                    }
                    let path = setup.payload.path ?? [0]
                    let body = [UInt8(path.count >> 8), UInt8(path.count & 0xFF)] + path + frost.peerRound1 + bytes
                    return await storePresignature(version: Self.frostPresignatureVersion, body: body, setup: setup,
                                                   channel: &channel, send: send)
                }
            case .exportShare(let run):
                _ = try await SessionDriver.run(run, channel: &channel, leadingFrames: leading, send: send, read: read,
                                                relay: relay, gate: gate)
                // §5.2: the app reconstructs, then DONE; audit whether it came.
                let done = try? await SessionDriver.awaitControl(.done, from: 0, channel: &channel, read: read, relay: relay)
                return .exported(keyId: setup.payload.keyID.map { Hex.encode($0) } ?? "", confirmed: done != nil)
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

    static func isLinkFailure(_ error: SilentShardError) -> Bool {
        if case .peerUnavailable = error { return true }
        return false
    }

    // MARK: - Helpers

    /// A signed REJECT from this node (with its certificate, so the app can authenticate it).
    func rejectFrame(_ rejection: SetupRejection, instanceID: [UInt8], setupHash: [UInt8]?) -> Frame {
        let payload = RejectPayload(code: rejection.code, retryAfterSeconds: rejection.retryAfterSeconds,
                                    setupHash: setupHash, nodeKey: identity.nodeKey.verifyingKey,
                                    certificate: identity.certificate, detail: rejection.detail).encoded()
        let header = FrameHeader(kind: .reject, sender: identity.index, receiver: 0, length: UInt32(payload.count),
                                 instanceID: instanceID)
        return Frame.signed(header: header, payload: payload, key: identity.nodeKey)
    }


    func onStoreQueue<T: Sendable>(_ body: @escaping @Sendable () throws(NodeStoreError) -> T) async throws(NodeStoreError) -> T {
        try await storeQueue.run(body)
    }
}
