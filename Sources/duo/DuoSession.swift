import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The app's side of duo (app + one cloud node, 2-of-2) for one algorithm. Each operation is one step
/// (`specs/session.md` §2.1, §5.3): connect → SETUP → ACCEPT (verified under `cloudVerifyingKey`) →
/// protocol frames → for share-producing operations the commit of §7.2 → disconnect.
///
/// Steps run one at a time on the session's `NetworkClient` (a client carries one connection); the
/// session is `Sendable` and may be shared between tasks.
public final class DuoSession: Sendable {
    /// The algorithm this session runs.
    public let algorithm: Keyshare.Algorithm
    let messageSigner: any MessageSigner
    let cloudVerifyingKey: String
    let storageClient: any StorageClient
    private let transport: TransportBox
    private let gate = StepGate()
    /// The device's wall clock (the system clock; tests inject their own), corrected from the node's
    /// time in an authenticated STALE_TIMESTAMP REJECT (§5.3, §9.6).
    private let clock: SessionClock

    /// The session's transport. `NetworkClient` is not `Sendable` (seed contract); the box is safe
    /// because every use happens inside a step that holds `gate`, so the client is never used from
    /// two tasks at once.
    private final class TransportBox: @unchecked Sendable {
        let client: any NetworkClient
        let actions: any DuoNetworkActionProvider
        init(client: any NetworkClient, actions: any DuoNetworkActionProvider) {
            self.client = client
            self.actions = actions
        }
    }

    package init(algorithm: Keyshare.Algorithm, messageSigner: any MessageSigner, cloudVerifyingKey: String,
                 storageClient: any StorageClient, networkClient: any NetworkClient, actionProvider: any DuoNetworkActionProvider,
                 deviceClock: @escaping MillisecondClock = WallClock.milliseconds) {
        self.algorithm = algorithm
        clock = SessionClock(device: deviceClock)
        self.messageSigner = messageSigner
        self.cloudVerifyingKey = cloudVerifyingKey
        self.storageClient = storageClient
        transport = TransportBox(client: networkClient, actions: actionProvider)
    }

    // MARK: - Operations

    /// Generates a new key with the cloud node. The new keyshare is staged in storage, committed at the
    /// node, then promoted to current; it is returned only after the node confirmed.
    public func keygen() async throws(SilentShardError) -> Keyshare {
        do { return try await keygenStep() } catch { return try await resolveInDoubt(error, previous: nil) }
    }

    private func keygenStep() async throws(SilentShardError) -> Keyshare {
        let result = try await step(.keygen, action: transport.actions.keygen, existing: nil) { setup in
            _ = setup
        } machine: { [algorithm] instanceID, setupHash throws(ProtocolError) in
            algorithm == .ecdsa
                ? try SessionProtocolMachine.dklsDKG(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID,
                                                    setupHash: setupHash, mode: .duo, groupID: nil)
                : try SessionProtocolMachine.frostDKG(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID, mode: .duo,
                                                     groupID: nil)
        }
        guard case .keyshare(let keyshare) = result else { throw .invalidInput(reason: "unexpected result") }
        return keyshare
    }

    /// Refreshes the shares of `keyshare`'s key (same public key, new shares and generation). Staged,
    /// committed at the node, then promoted; the old share stays current until then.
    public func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        try await settleIfStaged(keyshare)
        do { return try await refreshStep(keyshare) } catch { return try await resolveInDoubt(error, previous: keyshare) }
    }

    private func refreshStep(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        let result = try await step(.refresh, action: transport.actions.refresh, existing: keyshare) { setup in
            setup.keyID = keyshare.keyIdBytes
            setup.gen = [UInt8](keyshare.generation)
        } machine: { instanceID, setupHash throws(ProtocolError) in
            switch keyshare.algorithm {
            case .ecdsa:
                guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                return try SessionProtocolMachine.dklsDKG(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID,
                                                          setupHash: setupHash, mode: .duo, groupID: nil, refreshing: share)
            case .eddsa:
                guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                return try SessionProtocolMachine.frostDKG(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID, mode: .duo,
                                                           groupID: nil, refreshing: share)
            }
        }
        guard case .keyshare(let refreshed) = result else { throw .invalidInput(reason: "unexpected result") }
        return refreshed
    }

    /// Imports an existing private key: the app splits it with the node (DKG import mode, the app is
    /// the importer); afterwards neither party holds the whole key. ECDSA: `privateKey` is the 32-byte
    /// big-endian secp256k1 scalar; EdDSA: the 32-byte RFC 8032 seed. `rootChainCode` is 32 bytes.
    /// Staged, committed at the node (which refuses a key id it already holds: `keyAlreadyExists`),
    /// then promoted. The caller should erase its copy of the private key afterwards.
    public func `import`(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        guard privateKey.count == 32, rootChainCode.count == 32 else {
            throw .invalidInput(reason: "private key and chain code must be 32 bytes each")
        }
        let chainCode = [UInt8](rootChainCode)
        let keyID: [UInt8], publicKeyBytes: [UInt8]
        let makeMachine: @Sendable ([UInt8], [UInt8]) throws(ProtocolError) -> SessionProtocolMachine?
        switch algorithm {
        case .ecdsa:
            guard let x = try? Secp256k1.Scalar(nonZeroBytes: [UInt8](privateKey)) else {
                throw .invalidInput(reason: "private key is not a valid secp256k1 scalar")
            }
            let point = Secp256k1.Point(base: x)
            guard let compressed = try? point.compressed(), let id = try? DKLsDKG.keyId(for: point) else {
                throw .invalidInput(reason: "private key")
            }
            keyID = id
            publicKeyBytes = compressed
            makeMachine = { instanceID, setupHash throws(ProtocolError) in
                try SessionProtocolMachine.dklsImport(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID,
                                                      setupHash: setupHash, publicKey: point, chainCode: chainCode,
                                                      privateKey: x, mode: .duo, groupID: nil)
            }
        case .eddsa:
            guard let x = try? FROST.secretScalar(fromSeed: [UInt8](privateKey)) else {
                throw .invalidInput(reason: "private key is not a 32-byte Ed25519 seed")
            }
            let point = FROST.Point(base: x)
            keyID = FROST.keyId(for: point)
            publicKeyBytes = point.bytes
            makeMachine = { instanceID, _ throws(ProtocolError) in
                try SessionProtocolMachine.frostImport(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID,
                                                       publicKey: point, chainCode: chainCode, secret: x, mode: .duo,
                                                       groupID: nil)
            }
        }
        do { return try await importStep(keyID: keyID, publicKey: publicKeyBytes, chainCode: chainCode, machine: makeMachine) }
        catch { return try await resolveInDoubt(error, previous: nil) }
    }

    private func importStep(keyID: [UInt8], publicKey: [UInt8], chainCode: [UInt8],
                            machine: @escaping @Sendable ([UInt8], [UInt8]) throws(ProtocolError) -> SessionProtocolMachine?)
        async throws(SilentShardError) -> Keyshare {
        let result = try await step(.import, action: transport.actions.import, existing: nil, fill: { setup in
            setup.keyID = keyID
            setup.publicKey = publicKey
            setup.chainCode = chainCode
        }, machine: machine)
        guard case .keyshare(let keyshare) = result, keyshare.keyIdBytes == keyID else {
            throw .invalidInput(reason: "unexpected result")
        }
        return keyshare
    }

    /// Signs `message` with the cloud node. ECDSA: `message` is exactly the 32-byte hash; EdDSA: the
    /// message itself (≤ 32,768 bytes). `chainPath` is a soft BIP32 path ("m" or "m/1/2"). The
    /// signature is verified under the derived public key before it is returned.
    public func signature(keyshare: Keyshare, message: Data, chainPath: String = "m") async throws(SilentShardError) -> Signature {
        try check(keyshare)
        let messageBytes = [UInt8](message)
        switch keyshare.algorithm {
        case .ecdsa:
            guard messageBytes.count == SessionConstants.ecdsaMessageByteCount else {
                throw .invalidInput(reason: "ECDSA message must be a 32-byte hash")
            }
        case .eddsa:
            guard messageBytes.count <= SessionConstants.maximumEdDSAMessageByteCount else {
                throw .invalidInput(reason: "EdDSA message longer than 32,768 bytes")
            }
        }
        let path: DerivationPath
        do { path = try DerivationPath(chainPath) } catch { throw .invalidInput(reason: "invalid chain path") }
        try await settleIfStaged(keyshare)
        let result = try await step(.sign, action: transport.actions.sign, existing: keyshare) { setup in
            setup.keyID = keyshare.keyIdBytes
            setup.gen = [UInt8](keyshare.generation)
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.message = messageBytes
        } machine: { instanceID, setupHash throws(ProtocolError) in
            switch keyshare.algorithm {
            case .ecdsa:
                guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                return try SessionProtocolMachine.dklsSign(keyshare: share, signers: [0, 1], instanceID: instanceID,
                                                           setupHash: setupHash, path: path, messageHash: messageBytes)
            case .eddsa:
                guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                return try SessionProtocolMachine.frostSign(keyshare: share, signers: [0, 1], message: messageBytes,
                                                            path: path.indices)
            }
        }
        switch result {
        case .ecdsaSignature(let signature): return Signature(ecdsa: signature)
        case .eddsaSignature(let bytes): return try Signature(eddsa: Data(bytes))
        case .keyshare: throw .invalidInput(reason: "unexpected result")
        }
    }

    /// Settles the app's record for `keyId` with the node (`specs/session.md` §7.3), e.g. after
    /// `reconcileRequired` or at launch: a staged share the node committed is promoted; one it did not
    /// commit is rolled back (the node tombstones that generation first, so it can never commit it
    /// later). Returns the resulting current keyshare. Idempotent.
    ///
    /// Throws `keyNotFound` when there is no local record, `abortedKeyshare` when the first generation
    /// of a key was rolled back (there is no key), `staleKeyshare` when the node holds another
    /// generation than the app's current one, `reconcileConflict` for any other mismatch.
    public func reconcileKeyshare(keyId: String) async throws(SilentShardError) -> Keyshare {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        guard let record else { throw .keyNotFound(keyId: keyId) }
        let current = try record.current.map { share throws(SilentShardError) in try decode(share) }
        let staged = try record.staged.map { share throws(SilentShardError) in try decode(share) }
        guard let reference = staged ?? current else { throw .keyNotFound(keyId: keyId) }
        let context = ReconcileContext(storageKeyId: keyId, current: current, staged: staged)
        let appState = AppState(currentGen: current.map { [UInt8]($0.generation) },
                                staged: staged.map { ([UInt8]($0.generation), [UInt8](repeating: 0, count: 32)) })
        let result = try await step(.reconcile, action: transport.actions.reconcile, existing: reference,
                                    reconciling: context) { setup in
            setup.keyID = reference.keyIdBytes
            setup.appState = appState.encoded
        } machine: { _, _ throws(ProtocolError) in nil }
        guard case .keyshare(let keyshare) = result else { throw .invalidInput(reason: "unexpected result") }
        return keyshare
    }

    /// The local record's shares for one reconcile.
    struct ReconcileContext: Sendable {
        let storageKeyId: String
        let current: Keyshare?
        let staged: Keyshare?
    }

    private func decode(_ share: StoredShare) throws(SilentShardError) -> Keyshare {
        let kind: Keyshare.Algorithm
        switch share.kind {
        case .ecdsa: kind = .ecdsa
        case .eddsa: kind = .eddsa
        case .sdkRecord: throw .invalidKeyshare(reason: "not a keyshare record")
        }
        let keyshare = try Keyshare(algorithm: kind, mode: .duo, protocolBytes: [UInt8](share.bytes))
        try check(keyshare)
        return keyshare
    }

    /// The app's decision of §7.3 for duo (a duo node never holds PREPARED).
    private func runReconcile(_ context: ReconcileContext, channel: inout PartyFrameChannel, setupFrame: Frame,
                              client: any NetworkClient) async throws(SilentShardError) -> Keyshare {
        func send(_ frames: [Frame]) async throws(SilentShardError) {
            do { try await client.send(bytes: Data(Frame.bundle(frames))) } catch { throw Self.networkError(error) }
        }
        func read() async throws(SilentShardError) -> SessionDriver.Incoming {
            do { return SessionDriver.Incoming(bytes: [UInt8](try await client.read()), link: [1]) } catch {
                throw Self.networkError(error)
            }
        }
        try await send([setupFrame])
        _ = try await SessionDriver.awaitControl(.accept, channel: &channel, read: read)
        guard let status = channel.receiver.accepts[1]?.keyStatus, status.prepared == nil else {
            throw .protocolViolation(party: .node(1))
        }
        let keyId = context.storageKeyId
        let currentGen = context.current.map { [UInt8]($0.generation) }
        func done() async throws(SilentShardError) {
            try await send([try channel.control(.done, payload: DonePayload.none.encoded)])
        }
        guard let staged = context.staged else {
            guard let current = context.current, status.currentGen == currentGen else { throw .staleKeyshare }
            try await done()
            return current
        }
        let stagedGen = [UInt8](staged.generation)
        if status.currentGen == stagedGen {
            try await done()
            do { try await storageClient.promote(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            return staged
        }
        guard status.currentGen == currentGen else { throw .reconcileConflict(keyId: keyId) }
        // Roll back: the node tombstones g and answers how g was decided.
        let rollback = AbortPayload(code: .rollback, blamed: nil, rollback: (staged.keyIdBytes, stagedGen))
        try await send([try channel.control(.abort, payload: rollback.encoded)])
        let frame = try await SessionDriver.awaitControl(.outcome, channel: &channel, read: read)
        let outcome: OutcomePayload
        do { outcome = try OutcomePayload(bytes: frame.payload) } catch { throw SilentShardError(error, frameSender: 1) }
        guard outcome.keyID == staged.keyIdBytes, outcome.gen == stagedGen else { throw .protocolViolation(party: .node(1)) }
        switch outcome.outcome {
        case .aborted:
            do { try await storageClient.discardStaged(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            guard let current = context.current else { throw .abortedKeyshare(keyId: keyId) }
            return current
        case .committed where outcome.currentGen == stagedGen:
            do { try await storageClient.promote(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            return staged
        default:
            throw .reconcileConflict(keyId: keyId)
        }
    }

    /// §5.3: before an operation on a key whose record has a staged share, reconcile first.
    private func settleIfStaged(_ keyshare: Keyshare) async throws(SilentShardError) {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyshare.keyId) } catch { throw SilentShardError(storage: error) }
        if record?.staged != nil { _ = try await reconcileKeyshare(keyId: keyshare.keyId) }
    }

    /// §5.3 IN_DOUBT: one reconcile right away; if it does not finish, `reconcileRequired` stands.
    private func resolveInDoubt(_ error: SilentShardError, previous: Keyshare?) async throws(SilentShardError) -> Keyshare {
        guard case .reconcileRequired(let keyId) = error else { throw error }
        let settled: Keyshare
        do { settled = try await reconcileKeyshare(keyId: keyId) } catch {
            if case .abortedKeyshare = error { throw error }
            throw .reconcileRequired(keyId: keyId)
        }
        // A refresh that was rolled back leaves the previous generation: the operation failed.
        if let previous, settled.generation == previous.generation { throw .abortProtocol(party: nil) }
        return settled
    }

    // MARK: - One step

    func check(_ keyshare: Keyshare) throws(SilentShardError) {
        guard keyshare.algorithm == algorithm, keyshare.mode == .duo, keyshare.party == 0 else {
            throw .invalidKeyshare(reason: "not an app keyshare of a duo \(algorithm) key")
        }
    }

    var sessionAlgorithm: SessionAlgorithm { algorithm == .ecdsa ? .ecdsa : .eddsa }

    private func step(_ operation: SessionOperation, action: any NetworkAction, existing: Keyshare?,
                      reconciling: ReconcileContext? = nil,
                      fill: (inout SetupPayload) -> Void,
                      machine: @escaping @Sendable ([UInt8], [UInt8]) throws(ProtocolError) -> SessionProtocolMachine?)
        async throws(SilentShardError) -> ProtocolResult {
        // §5.3 clock correction and §10 KEY_BUSY backoff (StepRetryPolicy, shared with trio).
        try await StepRetryPolicy.run(clock: clock) { () throws(SilentShardError) in
            try await attempt(operation, action: action, existing: existing, reconciling: reconciling, fill: fill,
                              machine: machine)
        }
    }

    /// The session's clock: the device clock corrected by the node's, ms since the epoch.
    var sessionMilliseconds: UInt64 { clock.milliseconds }

    private func attempt(_ operation: SessionOperation, action: any NetworkAction, existing: Keyshare?,
                         reconciling: ReconcileContext?,
                         fill: (inout SetupPayload) -> Void,
                         machine: @escaping @Sendable ([UInt8], [UInt8]) throws(ProtocolError) -> SessionProtocolMachine?)
        async throws(SilentShardError) -> ProtocolResult {
        // Configuration before any connection (§1.2).
        let cloudKey: Ed25519.VerifyingKey
        do { cloudKey = try CloudVerifyingKey.parse(cloudVerifyingKey) } catch { throw SilentShardError(error) }
        let deviceKey: DeviceKey
        do { deviceKey = try DeviceKey(signer: messageSigner) } catch { throw .invalidConfiguration(reason: "device key") }
        let keys = SessionKeyPair()
        let instanceID = SecureRandom.bytes(count: 32)
        let now = sessionMilliseconds
        var setup = SetupPayload(mode: .duo, algorithm: sessionAlgorithm, operation: operation, timestamp: now,
                                 deviceKey: deviceKey, sessionKeys: keys.publicKeys, cloudKey: cloudKey.bytes,
                                 participants: PartySet([0, 1]))
        fill(&setup)
        let setupFrame: Frame
        do { setupFrame = try await setup.signedFrame(instanceID: instanceID, signer: messageSigner) }
        catch let error as SessionError { throw SilentShardError(error) }
        catch { throw .authenticationFailed(reason: "device signer failed") }
        let setupHash = SessionHash.setupHash(headerAndPayload: setupFrame.headerAndPayload)
        let protocolMachine: SessionProtocolMachine?
        do { protocolMachine = try machine(instanceID, setupHash) } catch { throw SilentShardError(error) }
        var channel = try PartyFrameChannel(local: 0, setupFrame: setupFrame, setup: setup, keys: keys,
                                            trust: .init(cloudKey: cloudKey, nowSeconds: now / 1000),
                                            protocolTags: protocolMachine?.receivableTags ?? [])
        try await refuseIfBanned(cloudKey: cloudKey, operation: operation)

        await gate.acquire()
        let client = transport.client
        do {
            try await client.connect(action: action, params: existing?.keyId)
        } catch {
            await gate.release()
            throw Self.networkError(error)
        }
        let outcome: Result<ProtocolResult, SilentShardError>
        do throws(SilentShardError) {
            if let protocolMachine {
                outcome = .success(try await run(operation, channel: &channel, setupFrame: setupFrame,
                                                 machine: protocolMachine, client: client))
            } else if let reconciling {
                outcome = .success(.keyshare(try await runReconcile(reconciling, channel: &channel, setupFrame: setupFrame,
                                                                    client: client)))
            } else {
                throw SilentShardError.invalidInput(reason: "no protocol")
            }
        } catch {
            await recordBanIfRequired(error, cloudKey: cloudKey, instanceID: instanceID)
            outcome = .failure(error)
        }
        try? await client.disconnect()
        await gate.release()
        return try outcome.get()
    }

    /// One protocol step after `connect`. Flight F1 (§5.2) is the SETUP with this party's first-round
    /// broadcasts when that round is short (FROST); a DKLs23 first round takes milliseconds and is
    /// computed after the ACCEPT instead, so that the SETUP never waits for it. First-round P2P messages
    /// need the node's session keys and follow the ACCEPT in any case.
    private func run(_ operation: SessionOperation, channel: inout PartyFrameChannel, setupFrame: Frame,
                     machine: SessionProtocolMachine, client: any NetworkClient) async throws(SilentShardError) -> ProtocolResult {
        func send(_ frames: [Frame]) async throws(SilentShardError) {
            do { try await client.send(bytes: Data(Frame.bundle(frames))) } catch { throw Self.networkError(error) }
        }
        func read() async throws(SilentShardError) -> SessionDriver.Incoming {
            do { return SessionDriver.Incoming(bytes: [UInt8](try await client.read()), link: [1]) } catch {
                throw Self.networkError(error)
            }
        }
        var flight = [setupFrame]
        var started: (machine: SessionProtocolMachine, unsent: [ProtocolMessage])?
        if machine.roundsAreShort {
            let (first, messages) = try await SessionDriver.step(machine) { (m: inout SessionProtocolMachine) throws(ProtocolError) in
                try m.start()
            }
            flight += try channel.frames(for: messages.filter { $0.to == nil })
            started = (first, messages.filter { $0.to != nil })
        }
        try await send(flight)
        let result: ProtocolResult
        do throws(SilentShardError) {
            // SETUP_SENT: the node's ACCEPT (or REJECT, thrown by the channel); then RUNNING.
            _ = try await SessionDriver.awaitControl(.accept, channel: &channel, read: read)
            let finished: SessionProtocolMachine
            if let started {
                finished = try await SessionDriver.runMachine(started: started.machine, unsent: started.unsent, channel: &channel,
                                                              send: send, read: read)
            } else {
                finished = try await SessionDriver.runMachine(machine, channel: &channel, send: send, read: read)
            }
            guard let finishedResult = finished.result else { throw .invalidInput(reason: "unexpected result") }
            result = finishedResult
        } catch {
            // Abort(–) for our own failure (§0): the node learns the session is over (also when its
            // ACCEPT failed verification: it did accept). Not after the node's own ABORT; after a
            // REJECT the node has closed and the best-effort send goes nowhere.
            if channel.peerAbort == nil { try? await abort(error, channel: &channel, send: send) }
            throw error
        }
        switch result {
        case .keyshare(let keyshare):
            return .keyshare(try await commit(keyshare, channel: &channel, send: send, read: read))
        case .ecdsaSignature(let signature):
            if let done = try? channel.control(.done, payload: DonePayload.ecdsa(signature.r + signature.s + [signature.recoveryId]).encoded) {
                try? await send([done])
            }
            return result
        case .eddsaSignature(let bytes):
            if let done = try? channel.control(.done, payload: DonePayload.eddsa(bytes).encoded) { try? await send([done]) }
            return result
        }
    }

    /// §7.2 at the app: stage durably, send COMMIT(D), promote on the node's OUTCOME(committed, D);
    /// roll back on its ABORT or OUTCOME(aborted); anything else leaves the share staged (in doubt).
    private func commit(_ keyshare: Keyshare, channel: inout PartyFrameChannel,
                        send: ([Frame]) async throws(SilentShardError) -> Void,
                        read: SessionDriver.Read) async throws(SilentShardError) -> Keyshare {
        let keyID = keyshare.keyIdBytes, gen = [UInt8](keyshare.generation)
        let digest = channel.commitDigest(keyID: keyID, gen: gen)
        let kind: StoredShareKind = keyshare.algorithm == .ecdsa ? .ecdsa : .eddsa
        do {
            try await storageClient.stage(keyId: keyshare.keyId, StoredShare(kind: kind, bytes: keyshare.protocolKeyshareBytes))
        } catch {
            let failure = SilentShardError(storage: error)
            try? await abort(failure, channel: &channel, send: send)
            throw failure
        }
        // COMMIT_SENT: from here on, a failure that is not a definitive answer leaves us in doubt.
        let outcome: OutcomePayload
        do {
            let commitFrame = try channel.control(.commit, payload: CommitPayload(keyID: keyID, gen: gen, digest: digest,
                                                                                   context: .inSession).encoded)
            try await send([commitFrame])
            let frame = try await SessionDriver.awaitControl(.outcome, channel: &channel, read: read)
            do { outcome = try OutcomePayload(bytes: frame.payload) } catch { throw SilentShardError(error, frameSender: 1) }
        } catch {
            if let abort = channel.peerAbort {
                // The node's ABORT before any OUTCOME: it did not commit (duo, §7.4). Roll back.
                try? await storageClient.discardStaged(keyId: keyshare.keyId)
                throw SilentShardError(abort.payload.sessionError(sender: 1))
            }
            throw .reconcileRequired(keyId: keyshare.keyId)
        }
        switch outcome.outcome {
        case .committed where outcome.keyID == keyID && outcome.gen == gen && outcome.digest == digest:
            do { try await storageClient.promote(keyId: keyshare.keyId) } catch { throw .reconcileRequired(keyId: keyshare.keyId) }
            return keyshare
        case .aborted:
            try? await storageClient.discardStaged(keyId: keyshare.keyId)
            throw .abortProtocol(party: .node(1))
        default:
            throw .reconcileRequired(keyId: keyshare.keyId)
        }
    }

    private func abort(_ error: SilentShardError, channel: inout PartyFrameChannel,
                       send: ([Frame]) async throws(SilentShardError) -> Void) async throws(SilentShardError) {
        let frame = try channel.control(.abort, payload: AbortPayload(for: error).encoded)
        try await send([frame])
    }

    static func networkError(_ error: any Error) -> SilentShardError {
        if let error = error as? SilentShardError { return error }
        if let error = error as? NetworkError { return .network(error) }
        if error is CancellationError { return .cancelled }
        return .network(.connectionFailed(reason: "transport error"))
    }
}

/// A FIFO async lock: one step at a time per session.
actor StepGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
    }
}
