import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// One accepted client connection of a duo step, as the server hands it to the session layer: binary
/// messages in and out, then a close. The WebSocket server implements it; tests use an in-memory pipe.
/// The server handles the optional token message (§2.1) before handing the connection over.
package protocol NodeStepConnection: Sendable {
    /// The next binary message from the app.
    func read() async throws -> Data
    /// Sends one binary message (a bundle of frames) to the app.
    func send(_ data: Data) async throws
    /// Closes the connection with a WebSocket close code (§2.1: 1000 done, 1002 malformed, 1008 REJECT,
    /// 1011 internal).
    func close(code: UInt16, reason: String) async
}

/// How a node step ended (for logs, metrics and tests; no secrets).
package enum DuoStepReport: Sendable, Equatable {
    /// The SETUP was refused with this code (REJECT sent).
    case rejected(WireCode)
    /// A share-changing step committed this key id and generation.
    case committed(keyId: String, gen: [UInt8])
    /// A signing step finished; `confirmed` says whether the app's DONE carried the same signature.
    case signed(confirmed: Bool)
    /// A reconcile ended: with the app's DONE (`outcome` nil) or its rollback, answered with this
    /// decision for the rolled-back generation.
    case reconciled(keyId: String, outcome: CommitDecision?)
    /// The step ended without a result.
    case failed(SilentShardError)
}

/// The node half of duo steps (`specs/session.md` §4.3, §5.4, §7.2) for keygen, refresh and sign
/// (ECDSA/DKLs23 and EdDSA/FROST), over an abstract `NodeStepConnection`.
///
/// * SETUP validation: `SetupValidator` (steps 1–8), then key state from the `NodeShareStore`.
/// * MPC rounds run on `SessionCompute`'s dedicated queue; `NodeShareStore` calls (synchronous SQLite or PostgreSQL)
///   run on this runner's own serial queue — neither blocks Swift's cooperative pool.
/// * Duo commit (§7.2 rule 2): the result is held in memory until the app's COMMIT(D) arrives, then
///   stored CURRENT in one transaction (`commitDirectly`), then OUTCOME(committed) is sent.
package final class DuoStepRunner: Sendable {
    // Internal (not private): the export POST handler shares the node key, store, store queue,
    // replay window and clock of the runner (DuoExportPostHandler).
    let nodeKey: Ed25519.SigningKey
    let store: NodeShareStore
    let replay: LockedValue<ReplayWindow>
    let replayRetentionMilliseconds: UInt64
    private let storeQueue = NodeStoreQueues(label: "silentshard.node.store")

    /// The admission stages every node runs (`NodeAdmission`).
    var admission: NodeAdmission {
        NodeAdmission(store: store, queue: storeQueue, rateLimiter: rateLimiter, leaseSeconds: leaseSeconds,
                      replayRetentionMilliseconds: replayRetentionMilliseconds)
    }
    let clock: @Sendable () -> UInt64
    /// Devices this process banned (§9.4), before and until the store has them (finding 12).
    let bans = DeviceBanLedger()
    private let setupTimeout: Duration
    private let frameTimeout: Duration
    private let leaseSeconds: Int64
    /// Keyshares decoded and validated by earlier steps (a signing key is not re-validated per signature).
    private let keyshares = NodeKeyshareCache()
    /// §9.5 limits on principals, device keys and keys (the server's, shared), or nil.
    let rateLimiter: NodeRateLimiter?

    /// - Parameters:
    ///   - nodeKey: the node's Ed25519 key; in duo its public key is the app's `cloudVerifyingKey`.
    ///   - store: the node's share store.
    ///   - replayWindow: the SETUP replay store (§9.6), shared by every step this runner serves.
    ///   - clock: node time in ms since the Unix epoch.
    ///   - setupTimeout, frameTimeout: §5.4 deadlines for the SETUP and for each expected frame; on
    ///     expiry the connection is closed and the step fails with `timeout` (nothing is stored).
    ///   - leaseDuration: how long a share-changing step or reconcile holds its key's lease (§7.2) at
    ///     most; the runner releases it when the step ends, the expiry only matters after a crash.
    ///   - rateLimiter: §9.5 limits (give the server's `NodeServerConfiguration.rateLimiter`); nil: none.
    package init(nodeKey: Ed25519.SigningKey, store: NodeShareStore, replayWindow: ReplayWindow,
                clock: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) },
                setupTimeout: Duration = .milliseconds(Int64(SessionConstants.setupTimeoutMilliseconds)),
                frameTimeout: Duration = .milliseconds(Int64(SessionConstants.frameTimeoutMilliseconds)),
                leaseDuration: Duration = .seconds(300), rateLimiter: NodeRateLimiter? = nil) {
        self.rateLimiter = rateLimiter
        self.setupTimeout = setupTimeout
        self.frameTimeout = frameTimeout
        leaseSeconds = max(1, leaseDuration.components.seconds)
        self.nodeKey = nodeKey
        self.store = store
        replay = LockedValue(replayWindow)
        replayRetentionMilliseconds = replayWindow.retentionMilliseconds
        self.clock = clock
    }

    /// Runs one step on `connection` for `route` and closes the connection.
    ///
    /// `principal`: who the server's token verifier said the client is (nil when no verifier ran, e.g.
    /// an app's own transport). With one, the route's operation must be in its scopes and, on an
    /// existing key, its subject must be the key's owner (FORBIDDEN otherwise, §9.1–9.2); keygen and
    /// import record the subject as the owner in the commit transaction.
    package func run(connection: some NodeStepConnection, route: NodeStepRoute, principal: Principal? = nil) async -> DuoStepReport {
        let first: [UInt8]
        do { first = try await read(connection, timeout: setupTimeout) } catch {
            await connection.close(code: 1002, reason: "no setup")
            return .failed(error)
        }
        // §4.3 steps 1–8.
        let now = clock()
        let context = SetupValidationContext(token: .accepted, mode: .duo, algorithm: route.algorithm,
                                             operation: route.operation, params: route.params, nodeIndex: 1,
                                             servedOperations: [.keygen, .refresh, .sign, .reconcile, .import],
                                             cloudKey: nodeKey.verifyingKey.bytes, groupID: nil, now: now)
        let validated: (setup: ValidatedSetup, rest: [Frame])
        do {
            validated = try replay.withLock { (window: inout ReplayWindow) throws(SetupRejection) in
                try SetupValidator.validate(message: first, context: context, replay: &window)
            }
        } catch {
            rateLimiter?.noteRejected(error, setupMessage: first, principal: principal?.rateLimitKey ?? "")
            return await reject(error, instanceID: RejectedSetup.instanceID(of: first), setupHash: RejectedSetup.setupHash(of: first),
                                connection: connection)
        }
        let setup = validated.setup
        // Admission in the order of every node (`NodeAdmission`): durable replay (§9.6), the token's scopes
        // and the key's owner (§9.1–9.2), rate limits (§9.5), the key's lease (§7.2); key state in `serve`.
        let admitted: NodeAdmission.Admitted<Void>
        do {
            admitted = try await admission.admit(setup, now: now, rateLimitKey: principal?.rateLimitKey ?? "") {
                () throws(SetupRejection) in
                if let principal { try await authorize(setup, principal: principal) }
            }
        } catch {
            return await reject(error, instanceID: setup.instanceID, setupHash: setup.setupHash, connection: connection)
        }
        let report = await serve(setup, early: validated.rest, now: now, owner: KeyAuthorization.ownerSubject(principal),
                                 connection: connection)
        await admitted.finish()
        return report
    }

    /// A validated step: key state, then the protocol (or reconcile).
    private func serve(_ setup: ValidatedSetup, early: [Frame], now: UInt64, owner: String,
                       connection: some NodeStepConnection) async -> DuoStepReport {
        if setup.operation == .reconcile {
            return await reconcile(setup, now: now, connection: connection)
        }
        // Steps 9–10: key state.
        let current: NodeKeyshare?
        do { current = try await keyState(setup) } catch {
            return await reject(error, instanceID: setup.instanceID, setupHash: setup.setupHash, connection: connection)
        }
        // Step 13: session keys, protocol machine, ACCEPT.
        let keys = SessionKeyPair()
        let run: NodeProtocolRun
        do { run = try makeRun(setup, current: current) } catch {
            return await reject(SetupRejection(.invalidParameter), instanceID: setup.instanceID, setupHash: setup.setupHash,
                                connection: connection)
        }
        var channel: PartyFrameChannel
        do {
            channel = try PartyFrameChannel(local: 1, setupFrame: setup.frame, setup: setup.payload, keys: keys,
                                            trust: .init(cloudKey: nodeKey.verifyingKey, nowSeconds: now / 1000),
                                            protocolTags: run.receivableTags)
        } catch {
            return await reject(SetupRejection(.invalidParameter), instanceID: setup.instanceID, setupHash: setup.setupHash,
                                connection: connection)
        }
        let accept = channel.acceptFrame(payload: AcceptPayload(setupHash: setup.setupHash, nodeKey: nodeKey.verifyingKey,
                                                                certificate: nil, sessionKeys: keys.publicKeys,
                                                                nodeTime: now, keyStatus: nil),
                                         nodeKey: nodeKey)
        let report = await running(setup: setup, early: early, run: run, accept: accept, owner: owner,
                                   channel: &channel, connection: connection)
        switch report {
        case .failed: await connection.close(code: 1011, reason: "aborted")
        default: await connection.close(code: 1000, reason: "done")
        }
        return report
    }

    // MARK: - Running

    private func running(setup: ValidatedSetup, early: [Frame], run: NodeProtocolRun, accept: Frame, owner: String,
                         channel: inout PartyFrameChannel, connection: some NodeStepConnection) async -> DuoStepReport {
        let send: SessionDriver.Send = { (frames: [Frame]) throws(SilentShardError) in
            do { try await connection.send(Data(Frame.bundle(frames))) } catch { throw .network(.connectionLost) }
        }
        let read: SessionDriver.Read = { [frameTimeout] () throws(SilentShardError) in
            SessionDriver.Incoming(bytes: try await self.read(connection, timeout: frameTimeout), link: [0])
        }
        // §9.4: before each protocol step over the app's messages — so before each flight after the first
        // (the ACCEPT's, which followed the key-state ban check) — the ban table is read again inside the
        // gate: a device banned while its session runs gets nothing more, and its checks do not run.
        let gate = nodeBans.gate(for: setup)
        do throws(SilentShardError) {
            try channel.ingestConsuming(frames: early, link: [0])
            switch run {
            case .share(let run):
                let keyshare = try await SessionDriver.run(run, channel: &channel, leadingFrames: [accept], send: send, read: read,
                                                           gate: gate)
                return await commit(keyshare, setup: setup, owner: owner, channel: &channel, send: send, read: read)
            case .signature(let run):
                let signature = try await SessionDriver.run(run, channel: &channel, leadingFrames: [accept], send: send,
                                                            read: read, gate: gate)
                return await awaitDone(signature.done, channel: &channel, read: read)
            case .presignature, .exportShare:
                throw .unsupportedOperation  // trio's; `makeRun` never makes them for duo
            }
        } catch {
            if channel.peerAbort == nil, let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                try? await send([frame])
            }
            await nodeBans.banIfRequired(error, setup: setup)
            return .failed(error)
        }
    }

    /// WAIT_COMMIT (duo; `NodeCommit`, direct policy): the app's COMMIT(D) must match this node's own
    /// result; then one commit transaction, then OUTCOME(committed). A mismatch is RESULT_MISMATCH
    /// (nothing stored).
    private func commit(_ keyshare: Keyshare, setup: ValidatedSetup, owner: String, channel: inout PartyFrameChannel,
                        send: SessionDriver.Send, read: SessionDriver.Read) async -> DuoStepReport {
        let keyID = keyshare.keyIdBytes, gen = [UInt8](keyshare.generation)
        let digest = channel.commitDigest(keyID: keyID, gen: gen)
        let share = NodeKeyshare(keyshare: keyshare, deviceIdentity: setup.deviceKey.identity, digest: digest)
        let party = "device:" + Hex.encode(setup.deviceKey.identity)
        // The generation this session replaces: refresh starts from SETUP's gen; keygen and import create the key.
        let replacing = setup.operation == .refresh ? setup.payload.gen : nil
        let keyId = keyshare.keyId, holder = setup.instanceID
        let storeCalls = NodeCommitExecutor.Store(commit: { [self] () throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                try store.commitDirectly(keyId: keyId, share: share, replacing: replacing, party: party, owner: owner)
            }
        }, releaseLease: { [self] in
            // The commit is durable: release the key's lease before answering, so the app's next
            // share-changing step does not meet this session's lease (`run` releases it again, a no-op).
            try? await onStoreQueue { [store] () throws(NodeStoreError) in try store.releaseLease(keyId: keyId, holder: holder) }
        })
        let commit = NodeCommit(policy: .direct, keyID: keyID, gen: gen, digest: digest, setupKeyID: setup.payload.keyID)
        switch await NodeCommitExecutor.run(commit, other: nil, channel: &channel, store: storeCalls, send: send, read: read) {
        case .committed: return .committed(keyId: keyId, gen: gen)
        case .failed(let error): return .failed(error)
        case .aborted, .inDoubt: return .failed(.abortProtocol(party: nil))  // trio's endings; a direct commit has neither
        }
    }

    /// After its finish the node waits for the app's DONE (for its audit log); a missing DONE is not
    /// an error of the step.
    private func awaitDone(_ own: DonePayload, channel: inout PartyFrameChannel,
                           read: SessionDriver.Read) async -> DuoStepReport {
        guard let frame = try? await SessionDriver.awaitControl(.done, channel: &channel, read: read),
              let done = try? DonePayload(bytes: frame.payload)
        else { return .signed(confirmed: false) }
        return .signed(confirmed: done == own)
    }

    /// §9.4: this process's bans with this node's store (`NodeBans`, shared with trio).
    private var nodeBans: NodeBans { NodeBans(ledger: bans, store: store, queue: storeQueue, party: "node") }

    // MARK: - Reconcile (§7.3, duo)

    /// Duo reconcile: ACCEPT carries `key_status` (a duo node never holds PREPARED: it commits in one
    /// transaction, §7.2 rule 2); then the app's DONE, or its ABORT(rollback g), which tombstones g
    /// (serialized with any late commit of g by the store's transaction) and is answered with
    /// OUTCOME(aborted) — or OUTCOME(committed) if g had been committed after all.
    private func reconcile(_ setup: ValidatedSetup, now: UInt64, connection: some NodeStepConnection) async -> DuoStepReport {
        guard let keyIDBytes = setup.payload.keyID, let appStateBytes = setup.payload.appState,
              let appState = try? AppState(bytes: appStateBytes)
        else {
            return await reject(SetupRejection(.invalidParameter), instanceID: setup.instanceID, setupHash: setup.setupHash,
                                connection: connection)
        }
        let keyID = Hex.encode(keyIDBytes)
        let deviceIdentity = setup.deviceKey.identity
        let stagedGen = appState.staged?.gen
        let state: (share: NodeKeyshare?, decision: CommitDecision?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                (try store.share(keyId: keyID), try stagedGen.flatMap { gen throws(NodeStoreError) in try store.decision(keyId: keyID, gen: gen) })
            }
        } catch {
            return await reject(SetupRejection(.storageFailure), instanceID: setup.instanceID, setupHash: setup.setupHash,
                                connection: connection)
        }
        // §9.2: a known key needs its registered device; an unknown key id reports an empty status.
        if let share = state.share {
            guard let blob = try? NodeShareBlob(bytes: share.bytes), blob.deviceIdentity == deviceIdentity else {
                return await reject(SetupRejection(.deviceNotRegistered), instanceID: setup.instanceID,
                                    setupHash: setup.setupHash, connection: connection)
            }
        }
        let decision: KeyStatus.Decision
        switch state.decision {
        case .committed?: decision = .committed
        case .aborted?: decision = .aborted
        case nil: decision = .unknown
        }
        let status = KeyStatus(currentGen: state.share?.gen, prepared: nil, preparedHoldsCommit: false, decision: decision)
        let keys = SessionKeyPair()
        var channel: PartyFrameChannel
        do {
            channel = try PartyFrameChannel(local: 1, setupFrame: setup.frame, setup: setup.payload, keys: keys,
                                            trust: .init(cloudKey: nodeKey.verifyingKey, nowSeconds: now / 1000),
                                            protocolTags: [])
        } catch {
            return await reject(SetupRejection(.invalidParameter), instanceID: setup.instanceID, setupHash: setup.setupHash,
                                connection: connection)
        }
        let accept = channel.acceptFrame(payload: AcceptPayload(setupHash: setup.setupHash, nodeKey: nodeKey.verifyingKey,
                                                                certificate: nil, sessionKeys: keys.publicKeys,
                                                                nodeTime: now, keyStatus: status),
                                         nodeKey: nodeKey)
        let report = await reconcileRunning(keyID: keyID, keyIDBytes: keyIDBytes, accept: accept, channel: &channel,
                                            connection: connection)
        await connection.close(code: 1000, reason: "done")
        return report
    }

    private func reconcileRunning(keyID: String, keyIDBytes: [UInt8], accept: Frame, channel: inout PartyFrameChannel,
                                  connection: some NodeStepConnection) async -> DuoStepReport {
        let send: SessionDriver.Send = { (frames: [Frame]) throws(SilentShardError) in
            do { try await connection.send(Data(Frame.bundle(frames))) } catch { throw .network(.connectionLost) }
        }
        let read: SessionDriver.Read = { [frameTimeout] () throws(SilentShardError) in
            SessionDriver.Incoming(bytes: try await self.read(connection, timeout: frameTimeout), link: [0])
        }
        do { try await send([accept]) } catch { return .failed(.network(.connectionLost)) }
        let storeCalls = NodeReconcileExecutor.Store(rollback: { [self] (gen: [UInt8]) throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.abort(keyId: keyID, gen: gen, party: "reconcile")
                    return (.aborted, try store.share(keyId: keyID)?.gen)
                } catch .alreadyDecided {
                    return (.committed, try store.share(keyId: keyID)?.gen)
                }
            }
        })
        switch await NodeReconcileExecutor.run(NodeReconcile(policy: .duo, keyID: keyIDBytes), channel: &channel,
                                               store: storeCalls, send: send, read: read) {
        case .reconciled(let decision): return .reconciled(keyId: keyID, outcome: decision)
        case .failed(let error): return .failed(error)
        }
    }

    // MARK: - SETUP steps 9–10, machines

    /// §9.1: the route's operation must be in the token's scopes; §9.2: a session on a key the node
    /// knows must come from the key owner's subject (keygen and import create keys; import of an
    /// existing key is KEY_EXISTS later).
    private func authorize(_ setup: ValidatedSetup, principal: Principal) async throws(SetupRejection) {
        try KeyAuthorization.checkCredential(principal, operation: setup.operation, deviceKey: setup.deviceKey.identity)
        guard setup.operation != .keygen, setup.operation != .import, let keyIDBytes = setup.payload.keyID else { return }
        let keyID = Hex.encode(keyIDBytes)
        let owner: KeyOwnership
        do { owner = try await onStoreQueue { [store] () throws(NodeStoreError) in try store.ownership(keyId: keyID) } }
        catch { throw SetupRejection(.storageFailure) }
        try KeyAuthorization.checkOwner(owner, principal: principal)
    }

    /// The token scope of an operation: its route action name.
    static func scopeName(_ operation: SessionOperation) -> String {
        switch operation {
        case .keygen: "keygen"
        case .reconcile: "reconcile"
        case .refresh: "refresh"
        case .sign: "sign"
        case .preSign: "preSign"
        case .preSignFinal: "preSignFinal"
        case .recover: "recover"
        case .export: "export"
        case .import: "import"
        case .hardDerivation: "hardDerivation"
        }
    }

    private func keyState(_ setup: ValidatedSetup) async throws(SetupRejection) -> NodeKeyshare? {
        let deviceIdentity = setup.deviceKey.identity
        let keyID = setup.payload.keyID.map { Hex.encode($0) }
        let operation = setup.operation
        let expectedKind = StoredShareKind(setup.algorithm)
        let state: (banned: Bool, share: NodeKeyshare?, status: NodeKeyStatus?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                let banned = try store.isBanned(deviceKey: deviceIdentity)
                guard let keyID else { return (banned, nil, nil) }
                return (banned, try store.share(keyId: keyID), try store.status(keyId: keyID))
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        if state.banned || bans.contains(deviceIdentity) { throw SetupRejection(.banned) }
        guard operation != .keygen else { return nil }
        if operation == .import {
            // §4.2: key_id is the protocol key id of public_key; §9.2: refused if the key id exists.
            guard let keyIDBytes = setup.payload.keyID, let publicKey = setup.payload.publicKey,
                  Self.protocolKeyID(publicKey, algorithm: setup.algorithm) == keyIDBytes
            else { throw SetupRejection(.invalidParameter) }
            guard state.share == nil, state.status?.preparedGen == nil else { throw SetupRejection(.keyExists) }
            return nil
        }
        guard let share = state.share, share.kind == expectedKind else { throw SetupRejection(.keyNotFound) }
        // §9.2: every session on an existing key carries a SETUP signed by its registered device key.
        guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw SetupRejection(.internalError) }
        guard blob.deviceIdentity == deviceIdentity else { throw SetupRejection(.deviceNotRegistered) }
        guard share.gen == setup.payload.gen else { throw SetupRejection(.staleGeneration, detail: share.gen) }
        if operation.changesShares, state.status?.preparedGen != nil { throw SetupRejection(.reconcileRequired) }
        return share
    }

    private func makeRun(_ setup: ValidatedSetup, current: NodeKeyshare?) throws -> NodeProtocolRun {
        let algorithm = setup.algorithm
        let keyshare = try current.map {
            try keyshares.keyshare(algorithm: algorithm, mode: .duo, protocolBytes: try NodeShareBlob(bytes: $0.bytes).protocolBytes)
        }
        var rng = SessionRandomness.system.generator()
        return try NodeProtocolRun.make(for: setup, party: .init(index: 1, mode: .duo, groupID: nil), keyshare: keyshare,
                                        using: &rng)
    }

    // MARK: - Helpers

    /// One read with a deadline. On expiry the connection is closed (which ends the pending read:
    /// transports need not support cancellation) and the read fails with `timeout`.
    private func read(_ connection: some NodeStepConnection, timeout: Duration) async throws(SilentShardError) -> [UInt8] {
        // The timer closes the connection to wake a read that cannot be cancelled; the flag makes the
        // outcome `.timeout` whichever task reports first (the woken read fails with connectionLost).
        let timedOut = TimeoutFlag()
        let outcome: Result<[UInt8], SilentShardError> = await withTaskGroup(of: Result<[UInt8], SilentShardError>?.self) { group in
            group.addTask {
                do { return .success([UInt8](try await connection.read())) } catch {
                    return .failure(timedOut.isSet ? .timeout : .network(.connectionLost))
                }
            }
            group.addTask {
                guard (try? await Task.sleep(for: timeout)) != nil else { return nil }
                timedOut.set()
                await connection.close(code: 1011, reason: "timeout")
                return .failure(.timeout)
            }
            var first: Result<[UInt8], SilentShardError>?
            while let next = await group.next() {
                if let next, first == nil {
                    first = next
                    group.cancelAll()
                }
            }
            return first ?? .failure(.timeout)
        }
        return try outcome.get()
    }

    /// The protocol key id of a SETUP public key (nil if it does not decode).
    private static func protocolKeyID(_ publicKey: [UInt8], algorithm: SessionAlgorithm) -> [UInt8]? {
        switch algorithm {
        case .ecdsa:
            guard let point = try? Secp256k1.Point(compressed: publicKey) else { return nil }
            return try? DKLsDKG.keyId(for: point)
        case .eddsa:
            guard let point = try? FROST.Point(bytes: publicKey) else { return nil }
            return FROST.keyId(for: point)
        }
    }

    private func reject(_ rejection: SetupRejection, instanceID: [UInt8], setupHash: [UInt8]?,
                        connection: some NodeStepConnection) async -> DuoStepReport {
        let payload = RejectPayload(code: rejection.code, retryAfterSeconds: rejection.retryAfterSeconds,
                                    setupHash: setupHash, nodeKey: nodeKey.verifyingKey,
                                    detail: rejection.detail).encoded()
        let header = FrameHeader(kind: .reject, sender: 1, receiver: 0, length: UInt32(payload.count), instanceID: instanceID)
        let frame = Frame.signed(header: header, payload: payload, key: nodeKey)
        try? await connection.send(Data(frame.encoded()))
        await connection.close(code: 1008, reason: "rejected")
        return .rejected(rejection.code)
    }

    func onStoreQueue<T: Sendable>(_ body: @escaping @Sendable () throws(NodeStoreError) -> T) async throws(NodeStoreError) -> T {
        try await storeQueue.run(body)
    }
}

/// Set once when a step's timer fires (shared by the reader and timer tasks of one read).
private final class TimeoutFlag: Sendable {
    private let value = LockedValue(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
