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
    /// The step engine every mode shares (SETUP, channel, connection, retries).
    private let engine: AppStepEngine
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
        engine = AppStepEngine(mode: .duo, algorithm: algorithm, messageSigner: messageSigner,
                               cloudVerifyingKey: cloudVerifyingKey, clock: clock)
    }

    // MARK: - Operations

    /// Generates a new key with the cloud node. The new keyshare is staged in storage, committed at the
    /// node, then promoted to current; it is returned only after the node confirmed.
    public func keygen() async throws(SilentShardError) -> Keyshare {
        do { return try await keygenStep() } catch { return try await resolveInDoubt(error, previous: nil) }
    }

    private func keygenStep() async throws(SilentShardError) -> Keyshare {
        try await step(.keygen, action: transport.actions.keygen, existing: nil) { _ in } body: { channel, link throws(SilentShardError) in
            let keyshare = try await runProtocol(channel: &channel, link: link) { [algorithm] instanceID, setupHash, rng throws(ProtocolError) in
                try SessionProtocolMachine.keygen(algorithm, local: 0, mode: .duo, instanceID: instanceID, setupHash: setupHash,
                                                  groupID: nil, using: &rng)
            }
            return try await commit(keyshare, channel: &channel, link: link)
        }
    }

    /// Refreshes the shares of `keyshare`'s key (same public key, new shares and generation). Staged,
    /// committed at the node, then promoted; the old share stays current until then.
    public func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        try await settleIfStaged(keyshare)
        do { return try await refreshStep(keyshare) } catch { return try await resolveInDoubt(error, previous: keyshare) }
    }

    private func refreshStep(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try await step(.refresh, action: transport.actions.refresh, existing: keyshare) { setup in
            setup.keyID = keyshare.keyIdBytes
            setup.gen = [UInt8](keyshare.generation)
        } body: { channel, link throws(SilentShardError) in
            let refreshed = try await runProtocol(channel: &channel, link: link) { instanceID, setupHash, rng throws(ProtocolError) in
                try SessionProtocolMachine.refresh(keyshare, instanceID: instanceID, setupHash: setupHash, groupID: nil, using: &rng)
            }
            return try await commit(refreshed, channel: &channel, link: link)
        }
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
        let key = try SessionProtocolMachine.ImportedKey(algorithm: algorithm, privateKey: [UInt8](privateKey))
        let keyID = try key.keyID(), publicKeyBytes = try key.publicKeyBytes()
        let makeRun: @Sendable ([UInt8], [UInt8], inout any RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> = {
            instanceID, setupHash, rng throws(ProtocolError) in
            try SessionProtocolMachine.importKey(key, chainCode: chainCode, local: 0, mode: .duo, instanceID: instanceID,
                                                 setupHash: setupHash, groupID: nil, using: &rng)
        }
        do { return try await importStep(keyID: keyID, publicKey: publicKeyBytes, chainCode: chainCode, run: makeRun) }
        catch { return try await resolveInDoubt(error, previous: nil) }
    }

    private func importStep(keyID: [UInt8], publicKey: [UInt8], chainCode: [UInt8],
                            run makeRun: @escaping @Sendable ([UInt8], [UInt8], inout any RandomNumberGenerator) throws(ProtocolError)
                                -> ProtocolRun<Keyshare>) async throws(SilentShardError) -> Keyshare {
        try await step(.import, action: transport.actions.import, existing: nil) { setup in
            setup.keyID = keyID
            setup.publicKey = publicKey
            setup.chainCode = chainCode
        } body: { channel, link throws(SilentShardError) in
            let keyshare = try await runProtocol(channel: &channel, link: link, makeRun)
            // The DKG's import mode shares exactly the given public key, whose id this is.
            guard keyshare.keyIdBytes == keyID else {
                try? await abort(.abortProtocol(party: nil), channel: &channel, link: link)
                throw .abortProtocol(party: nil)
            }
            return try await commit(keyshare, channel: &channel, link: link)
        }
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
        let signature = try await step(.sign, action: transport.actions.sign, existing: keyshare) { setup in
            setup.keyID = keyshare.keyIdBytes
            setup.gen = [UInt8](keyshare.generation)
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.message = messageBytes
        } body: { channel, link throws(SilentShardError) in
            let signature = try await runProtocol(channel: &channel, link: link) { instanceID, setupHash, rng throws(ProtocolError) in
                try SessionProtocolMachine.sign(keyshare, signers: [0, 1], instanceID: instanceID, setupHash: setupHash, path: path,
                                                message: messageBytes, using: &rng)
            }
            // DONE confirms the signature to the node (its audit); best effort.
            if let done = try? channel.control(.done, payload: signature.done.encoded) { try? await link.send([done]) }
            return signature
        }
        return try signature.signature()
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
        return try await step(.reconcile, action: transport.actions.reconcile, existing: reference) { setup in
            setup.keyID = reference.keyIdBytes
            setup.appState = appState.encoded
        } body: { channel, link throws(SilentShardError) in
            try await runReconcile(context, channel: &channel, link: link)
        }
    }

    /// The local record's shares for one reconcile.
    struct ReconcileContext: Sendable {
        let storageKeyId: String
        let current: Keyshare?
        let staged: Keyshare?
    }

    private func decode(_ share: StoredShare) throws(SilentShardError) -> Keyshare {
        guard let algorithm = share.kind.algorithm else { throw .invalidKeyshare(reason: "not a keyshare record") }
        let keyshare = try Keyshare(algorithm: algorithm, mode: .duo, protocolBytes: [UInt8](share.bytes))
        try check(keyshare)
        return keyshare
    }

    /// §7.3 at the app (`AppReconcile`, duo policy: a duo node never holds PREPARED), after the node's
    /// ACCEPT with its `key_status`.
    private func runReconcile(_ context: ReconcileContext, channel: inout PartyFrameChannel,
                              link: AppStepLink) async throws(SilentShardError) -> Keyshare {
        try await link.send([link.setupFrame])
        _ = try await SessionDriver.awaitControl(.accept, channel: &channel, read: link.read)
        // A duo app stages without a digest (its node never holds PREPARED): zeros, as in its AppState.
        return try await AppReconcileExecutor.settle(storageKeyId: context.storageKeyId, current: context.current,
                                                     staged: context.staged.map { ($0, [UInt8](repeating: 0, count: 32)) },
                                                     policy: .duo, nodes: link.nodes, channel: &channel,
                                                     storageClient: storageClient, send: link.send, read: link.read)
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


    /// One step over the shared engine: the SETUP `fill` completes, then `body` on the step's connection.
    /// §9.4: a node this app banned is refused before any connection; a failure that calls for a ban records it.
    private func step<Outcome>(_ operation: SessionOperation, action: any NetworkAction, existing: Keyshare?,
                               fill: (inout SetupPayload) -> Void,
                               body: (inout PartyFrameChannel, AppStepLink) async throws(SilentShardError) -> Outcome)
        async throws(SilentShardError) -> Outcome {
        try await engine.run(.init(operation, action: action, participants: [0, 1], params: existing?.keyId),
                             client: transport.client, fill: fill,
                             beforeConnect: { (cloudKey: Ed25519.VerifyingKey) throws(SilentShardError) in
                                 try await refuseIfBanned(cloudKey: cloudKey, operation: operation)
                             },
                             body: body,
                             onFailure: { error, cloudKey, instanceID in
                                 await recordBanIfRequired(error, cloudKey: cloudKey, instanceID: instanceID)
                             })
    }

    /// The session's clock: the device clock corrected by the node's, ms since the epoch.
    var sessionMilliseconds: UInt64 { clock.milliseconds }

    /// Runs the protocol `makeRun` makes (from the session's instance id and setup hash) on the step:
    /// flight F1 (§5.2) is the SETUP with this party's first-round broadcasts when that round is short
    /// (FROST); a DKLs23 first round takes milliseconds and is computed after the ACCEPT instead, so
    /// that the SETUP never waits for it. First-round P2P messages need the node's session keys and
    /// follow the ACCEPT in any case. Any failure of ours is sent as ABORT before it is thrown.
    private func runProtocol<Outcome>(channel: inout PartyFrameChannel, link: AppStepLink,
                                      _ makeRun: ([UInt8], [UInt8], inout any RandomNumberGenerator) throws(ProtocolError)
                                          -> ProtocolRun<Outcome>) async throws(SilentShardError) -> Outcome {
        let run: ProtocolRun<Outcome>
        do {
            var rng = SessionRandomness.system.generator()
            run = try makeRun(channel.instanceID, channel.receiver.setupHash, &rng)
        } catch { throw SilentShardError(error) }
        var flight = [link.setupFrame]
        var started: (run: ProtocolRun<Outcome>, unsent: [ProtocolMessage])?
        if run.roundsAreShort {
            let (first, messages) = try await SessionDriver.start(run)
            flight += try channel.frames(for: messages.filter { $0.to == nil })
            started = (first, messages.filter { $0.to != nil })
        }
        try await link.send(flight)
        do throws(SilentShardError) {
            // SETUP_SENT: the node's ACCEPT (or REJECT, thrown by the channel); then RUNNING.
            _ = try await SessionDriver.awaitControl(.accept, channel: &channel, read: link.read)
            if let started {
                return try await SessionDriver.run(started: started.run, unsent: started.unsent, channel: &channel,
                                                   send: link.send, read: link.read)
            }
            return try await SessionDriver.run(run, channel: &channel, send: link.send, read: link.read)
        } catch {
            // Abort(–) for our own failure (§0): the node learns the session is over (also when its
            // ACCEPT failed verification: it did accept). Not after the node's own ABORT; after a
            // REJECT the node has closed and the best-effort send goes nowhere.
            if channel.peerAbort == nil { try? await abort(error, channel: &channel, link: link) }
            throw error
        }
    }

    /// §7.2 at the app (`AppCommit`, duo policy): stage durably, send COMMIT(D), promote on the node's
    /// OUTCOME(committed, D); roll back on its ABORT or OUTCOME(aborted); anything else leaves the share
    /// staged (in doubt: `reconcileRequired`).
    private func commit(_ keyshare: Keyshare, channel: inout PartyFrameChannel,
                        link: AppStepLink) async throws(SilentShardError) -> Keyshare {
        let staged = StoredShare(kind: StoredShareKind(keyshare.algorithm), bytes: keyshare.protocolKeyshareBytes)
        return try await AppCommitExecutor.commit(keyshare, policy: .duo, nodes: link.nodes, channel: &channel,
                                                  storage: { [storageClient] _ in
                                                      AppCommitExecutor.Storage(storageClient, keyId: keyshare.keyId, staging: staged)
                                                  }, send: link.send, read: link.read)
    }

    private func abort(_ error: SilentShardError, channel: inout PartyFrameChannel, link: AppStepLink) async throws(SilentShardError) {
        let frame = try channel.control(.abort, payload: AbortPayload(for: error).encoded)
        try await link.send([frame])
    }

    static func networkError(_ error: any Error) -> SilentShardError { AppStepEngine.networkError(error) }
}
