import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Stage 2 at every node: the admission stages `AdmissionPlans` chooses for the step's operation (durable replay,
/// authorization, rate limits, the key's lease, bans, key state: `docs/protocol/session.md` §4.3 steps 9–10,
/// §9.1–9.5), then the run. The stages' checks that read a key's state live here.
extension NodeStepRunner {
    /// The outcome of a node's authorization of one SETUP.
    struct Authorization: Sendable {
        /// The token subject, recorded as a new key's owner in the commit transaction (session.md §9.2); without a
        /// principal, `anonymous` (a key is never stored without an owner, finding 11).
        var owner: String
        /// A recover authorized to register SETUP's device key in place of the registered one (session.md §9.3).
        var rebind: Bool
    }

    /// session.md §9.1: the route's operation must be in the token's scopes (export too needs the explicit scope
    /// `export`: `Principal.allows` never grants it by default, session.md §9.3); with a `device_binding`, SETUP's
    /// device key must equal it. session.md §9.2: a session on a key this node knows must come from the key's owner
    /// subject. session.md §9.3: a recover whose device key is not the registered one needs the explicit scope
    /// `recover`, a binding to that device key and the owner's subject (FORBIDDEN otherwise).
    /// `principal` nil (no verifier information): nothing is checked; a new key is recorded as owned by
    /// `anonymous`, the subject `--auth none` gives.
    func authorize(_ setup: ValidatedSetup, principal: Principal?) async throws(SetupRejection) -> Authorization {
        guard let principal else { return Authorization(owner: KeyAuthorization.ownerSubject(nil), rebind: false) }
        try KeyAuthorization.checkCredential(principal, operation: setup.operation, deviceKey: setup.deviceKey.identity)
        let authorized = Authorization(owner: principal.subject, rebind: false)
        guard setup.operation != .keygen, setup.operation != .import, let setupKeyID = setup.payload.keyID else {
            return authorized
        }
        let keyID = setupKeyID.hex
        let recover = setup.operation == .recover
        let state: (owner: KeyOwnership, device: [UInt8]?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                let owner = try store.ownership(keyId: keyID)
                guard recover else { return (owner, nil) }
                return (owner, try store.share(keyId: keyID).flatMap { try? NodeShareBlob(bytes: $0.bytes) }?.deviceIdentity)
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        do {
            try KeyAuthorization.checkOwner(state.owner, principal: principal)
        } catch {
            // Security review 2, finding 9: "not yours" answers like "not here" (reconcile and import, whose
            // unknown-key answers start a session, stay FORBIDDEN).
            guard setup.operation != .reconcile, setup.operation != .import else { throw error }
            // A relay-only A relays an unknown key to B, which decides; so it does for another subject's key.
            if setup.isRelayOnly { return authorized }
            throw await notHereRejection(setup)
        }
        guard recover, let registered = state.device, registered != setup.deviceKey.identity else { return authorized }
        // session.md §9.3: recover with a new device key.
        guard principal.grantsExplicitly(SessionOperation.recover.name), principal.deviceBinding == setup.deviceKey.identity,
              case .owned = state.owner
        else { throw SetupRejection(.forbidden) }
        return Authorization(owner: principal.subject, rebind: true)
    }

    /// What `keyState` answers a SETUP on a key this node does not hold, once its device is not banned:
    /// BANNED for a banned device, else KEY_NOT_FOUND (a trio signer: SIGNER_UNAVAILABLE). Given to another
    /// subject's key in its place (security review 2, finding 9), before any lease or per-key count is taken
    /// (neither is held for an unknown key's refusal either).
    func notHereRejection(_ setup: ValidatedSetup) async -> SetupRejection {
        if await nodeBans.deviceBanned(setup.deviceKey.identity) { return SetupRejection(.banned) }
        let signing = setup.operation == .sign || setup.operation == .preSign
        return SetupRejection(party.mode == .trio && signing ? .signerUnavailable : .keyNotFound)
    }

    /// session.md §4.3 steps 9–10 from the store, after the `ban` stage: key existence with the route's algorithm,
    /// the registered device, `gen` = current, no PREPARED share blocking a share change. A relay-only node A
    /// checks bans only (step 10 concerns participants). `rebind`: a recover authorized to register SETUP's
    /// (new) device key (session.md §9.3); the registered device is then not required.
    func keyState(_ setup: ValidatedSetup, rebind: Bool) async throws(SetupRejection) -> NodeKeyshare? {
        let deviceIdentity = setup.deviceKey.identity
        let keyID = setup.payload.keyID?.hex
        let expectedKind = StoredShareKind(setup.algorithm)
        // Bans were checked by the `ban` stage just before (session.md §9.4).
        guard !setup.isRelayOnly, setup.operation != .keygen else { return nil }
        let state: (share: NodeKeyshare?, status: NodeKeyStatus?, retired: (parentKeyId: String, path: [UInt8])?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                guard let keyID else { return (nil, nil, nil) }
                let share = try store.share(keyId: keyID)
                return (share, try store.status(keyId: keyID), share == nil ? try store.retirement(keyId: keyID) : nil)
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        if setup.operation == .import {
            // session.md §4.2: key_id is the protocol key id of public_key; session.md §9.2: refused if the key id exists.
            guard let setupKeyID = setup.payload.keyID, let publicKey = setup.payload.publicKey,
                  Self.protocolKeyID(publicKey, algorithm: setup.algorithm) == setupKeyID
            else { throw SetupRejection(.invalidParameter) }
            guard state.share == nil, state.status?.preparedGen == nil else { throw SetupRejection(.keyExists) }
            return nil
        }
        if state.share == nil, let retired = state.retired {
            // Finding 1: a hard-derived child retired by its parent's new generation. The owner (only the
            // owner gets this far) learns which parent and path to derive it from again.
            guard let parent = (try? Hex.decode(retired.parentKeyId)).flatMap(KeyID.init) else {
                throw SetupRejection(.internalError)  // a retirement row the store should never hold
            }
            throw SetupRejection(.keyRetired, detail: KeyRetiredDetail(parentKeyID: parent, path: retired.path).encoded)
        }
        guard let share = state.share, share.kind == expectedKind else {
            // session.md §6.3: a trio signer without its share answers SIGNER_UNAVAILABLE so the app can use the other node.
            let signing = setup.operation == .sign || setup.operation == .preSign
            throw SetupRejection(party.mode == .trio && signing ? .signerUnavailable : .keyNotFound)
        }
        // session.md §9.2: every session on an existing key carries a SETUP signed by its registered device key.
        guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw SetupRejection(.internalError) }
        guard blob.deviceIdentity == deviceIdentity || (rebind && setup.operation == .recover) else {
            throw SetupRejection(.deviceNotRegistered)
        }
        if setup.operation == .recover {
            // session.md §6.4: recover only a key this node holds current; key_id is the protocol key id of the
            // expected public key, which must be this key's (no gen: the app lost its share).
            guard let setupKeyID = setup.payload.keyID, let publicKey = setup.payload.publicKey,
                  Self.protocolKeyID(publicKey, algorithm: setup.algorithm) == setupKeyID
            else { throw SetupRejection(.invalidParameter) }
            if state.status?.preparedGen != nil { throw SetupRejection(.reconcileRequired) }
            return share
        }
        guard share.gen == setup.payload.gen?.bytes else {
            throw await generationMismatch(keyId: keyID ?? "", appGen: setup.payload.gen?.bytes, current: share.gen,
                                           prepared: state.status?.preparedGen)
        }
        if setup.operation.changesShares, state.status?.preparedGen != nil { throw SetupRejection(.reconcileRequired) }
        return share
    }

    /// session.md §4.3 steps 9–10 for reconcile: a share (CURRENT or PREPARED) of another device is
    /// DEVICE_NOT_REGISTERED; an unknown key id reports an empty status. A banned device may still
    /// reconcile (session.md §9.4: bans refuse every session except reconcile), so its app and the nodes agree.
    /// (A duo node never holds PREPARED: it commits in one transaction, session.md §7.2 rule 2.)
    func reconcileStatus(_ setup: ValidatedSetup) async throws(SetupRejection) -> KeyStatus {
        guard let setupKeyID = setup.payload.keyID, let appStateBytes = setup.payload.appState,
              let appState = try? AppState(bytes: appStateBytes)
        else { throw SetupRejection(.invalidParameter) }
        let keyID = setupKeyID.hex
        let deviceIdentity = setup.deviceKey.identity
        let stagedGen = appState.staged?.gen
        let state: (current: NodeKeyshare?, prepared: NodeKeyshare?, decision: CommitDecision?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                (try store.share(keyId: keyID),
                 try store.share(keyId: keyID, slot: .prepared),
                 try stagedGen.flatMap { gen throws(NodeStoreError) in try store.decision(keyId: keyID, gen: gen.bytes) })
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        for share in [state.current, state.prepared].compactMap({ $0 }) {
            guard let blob = try? NodeShareBlob(bytes: share.bytes), blob.deviceIdentity == deviceIdentity else {
                throw SetupRejection(.deviceNotRegistered)
            }
        }
        let decision: KeyStatus.Decision
        switch state.decision {
        case .committed?: decision = .committed
        case .aborted?: decision = .aborted
        case nil: decision = .unknown
        }
        // The store writes 32-byte generations only; a row with another size is refused, never dropped
        // from the status (a missing PREPARED would let the app roll back a generation the node holds).
        func generation(_ share: NodeKeyshare?) throws(SetupRejection) -> Generation? {
            guard let share else { return nil }
            guard let gen = Generation(share.gen) else { throw SetupRejection(.internalError) }
            return gen
        }
        // Second review finding 1: an app current generation this node never saw means the node is behind.
        if let current = state.current, let appGen = appState.currentGen?.bytes, appGen != current.gen,
           case let rejection = await generationMismatch(keyId: keyID, appGen: appGen, current: current.gen,
                                                         prepared: state.prepared?.gen),
           rejection.code != .staleGeneration {
            throw rejection
        }
        let prepared = try generation(state.prepared).map { ($0, state.prepared?.digest ?? [UInt8](repeating: 0, count: 32)) }
        return KeyStatus(currentGen: try generation(state.current), prepared: prepared, preparedHoldsCommit: false,
                         decision: decision)
    }

    /// This node's protocol run for `setup` over its current share (step 13).
    func makeRun(_ setup: ValidatedSetup, current: NodeKeyshare?) throws -> NodeProtocolRun {
        let keyshare = try current.map {
            try keyshares.keyshare(algorithm: setup.algorithm, mode: party.mode,
                                   protocolBytes: try NodeShareBlob(bytes: $0.bytes).protocolBytes, groupId: party.groupID)
        }
        var rng = SessionRandomness.system.generator()
        return try NodeProtocolRun.make(for: setup, party: party.runParty, keyshare: keyshare, using: &rng)
    }

    /// The protocol key id of a SETUP public key (nil if it does not decode).
    static func protocolKeyID(_ publicKey: [UInt8], algorithm: SessionAlgorithm) -> KeyID? {
        switch algorithm {
        case .ecdsa:
            guard let point = try? Secp256k1.Point(compressed: publicKey), let id = try? DKLsDKG.keyId(for: point) else { return nil }
            return KeyID(id)
        case .eddsa:
            guard let point = try? FROST.Point(bytes: publicKey) else { return nil }
            return KeyID(FROST.keyId(for: point))
        }
    }
}
