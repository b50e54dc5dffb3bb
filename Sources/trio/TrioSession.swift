import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Which cloud node co-signs with the app (`specs/session.md` §6.3).
public enum TrioSigner: Sendable, Equatable {
    /// S = {0, 1}: node A, the entry point (the default: no extra hop).
    case nodeA
    /// S = {0, 2}: node B, with A as a pure relay that sees only ciphertext of the app–B exchange.
    case nodeB

    var index: PartyIndex { self == .nodeA ? 1 : 2 }
}

/// The app's side of trio (app + node A + node B, 2-of-3) for one algorithm. Each operation is one
/// step over one connection to node A (`specs/session.md` §2.1, §5.3, §6): connect → SETUP →
/// ACCEPTs of the participating nodes (each certified by the cluster key, the app's
/// `cloudVerifyingKey`, and of one `group_id`) → protocol frames (B's relayed by A, its P2P traffic
/// end-to-end encrypted) → for share-producing operations the commit of §7.2 → disconnect.
///
/// Steps run one at a time on the session's `NetworkClient`; the session is `Sendable`.
public final class TrioSession: Sendable {
    /// The algorithm this session runs.
    public let algorithm: Keyshare.Algorithm
    private let messageSigner: any MessageSigner
    let cloudVerifyingKey: String
    let storageClient: any StorageClient
    let transport: TransportBox
    /// The step engine every mode shares (SETUP, channel, connection, retries).
    private let engine: AppStepEngine
    /// The device's wall clock (the system clock; tests inject their own), corrected from a node's time in
    /// an authenticated STALE_TIMESTAMP REJECT (§5.3, §9.6).
    let clock: SessionClock

    /// `NetworkClient` is not `Sendable` (seed contract); every use happens inside a step holding
    /// `gate`, so the client is never used from two tasks at once.
    final class TransportBox: @unchecked Sendable {
        let client: any NetworkClient
        let actions: any TrioNetworkActionProvider
        init(client: any NetworkClient, actions: any TrioNetworkActionProvider) {
            self.client = client
            self.actions = actions
        }
    }

    package init(algorithm: Keyshare.Algorithm, messageSigner: any MessageSigner, cloudVerifyingKey: String,
                 storageClient: any StorageClient, networkClient: any NetworkClient, actionProvider: any TrioNetworkActionProvider,
                 deviceClock: @escaping MillisecondClock = WallClock.milliseconds) {
        self.algorithm = algorithm
        clock = SessionClock(device: deviceClock)
        self.messageSigner = messageSigner
        self.cloudVerifyingKey = cloudVerifyingKey
        self.storageClient = storageClient
        transport = TransportBox(client: networkClient, actions: actionProvider)
        engine = AppStepEngine(mode: .trio, algorithm: algorithm, messageSigner: messageSigner,
                               cloudVerifyingKey: cloudVerifyingKey, clock: clock)
    }

    // MARK: - Operations

    /// Generates a new 2-of-3 key with nodes A and B. The keyshare records the nodes' `group_id`; it
    /// is staged in storage, committed at both nodes, then promoted, and returned only after both
    /// nodes confirmed.
    public func keygen() async throws(SilentShardError) -> Keyshare {
        do { return try await keygenStep() } catch { return try await resolveInDoubt(error, previous: nil) }
    }

    private func keygenStep() async throws(SilentShardError) -> Keyshare {
        try await step(.keygen, action: transport.actions.keygen, existing: nil, participants: [0, 1, 2]) { _ in
        } body: { channel, link throws(SilentShardError) in
            let keyshare = try await runProtocol(channel: &channel, link: link) {
                [algorithm] instanceID, setupHash, groupID, rng throws(ProtocolError) in
                try SessionProtocolMachine.keygen(algorithm, local: 0, mode: .trio, instanceID: instanceID, setupHash: setupHash,
                                                  groupID: groupID, using: &rng)
            }
            return try await commit(keyshare, channel: &channel, link: link)
        }
    }

    /// Refreshes the shares of `keyshare`'s key at all three parties (same public key, new shares and
    /// generation). Staged, committed at both nodes, then promoted; the old share stays current until then.
    public func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        try await settleIfStaged(keyshare)
        return try await retryingAfterReconcile(keyshare) { () throws(SilentShardError) in
            do throws(SilentShardError) { return try await refreshStep(keyshare) } catch {
                return try await resolveInDoubt(error, previous: keyshare)
            }
        }
    }

    private func refreshStep(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try await step(.refresh, action: transport.actions.refresh, existing: keyshare, participants: [0, 1, 2]) { setup in
            setup.keyID = keyshare.keyIdBytes
            setup.gen = [UInt8](keyshare.generation)
        } body: { channel, link throws(SilentShardError) in
            let refreshed = try await runProtocol(channel: &channel, link: link) {
                instanceID, setupHash, groupID, rng throws(ProtocolError) in
                try SessionProtocolMachine.refresh(keyshare, instanceID: instanceID, setupHash: setupHash, groupID: groupID,
                                                   using: &rng)
            }
            return try await commit(refreshed, channel: &channel, link: link)
        }
    }

    /// Signs `message` with node A (S = {0, 1}); if A answers SIGNER_UNAVAILABLE (its share missing
    /// or its operator's policy, §6.3) or this app has banned A (§9.4), signs with node B instead
    /// (S = {0, 2}, A relaying). ECDSA:
    /// `message` is exactly the 32-byte hash; EdDSA: the message (≤ 32,768 bytes). `chainPath` is a
    /// soft BIP32 path ("m" or "m/1/2"). The signature is verified under the derived public key
    /// before it is returned.
    public func signature(keyshare: Keyshare, message: Data, chainPath: String = "m") async throws(SilentShardError) -> Signature {
        do {
            return try await signature(keyshare: keyshare, message: message, chainPath: chainPath, signer: .nodeA)
        } catch .peerUnavailable(party: .node(1)?) {
            return try await signature(keyshare: keyshare, message: message, chainPath: chainPath, signer: .nodeB)
        } catch .partyBanned(party: .node(1)?) {
            // §9.4: this app banned A; B signs (A relays ciphertext only).
            return try await signature(keyshare: keyshare, message: message, chainPath: chainPath, signer: .nodeB)
        }
    }

    /// Signs `message` with the given co-signer (§6.3: e.g. `.nodeB` when A is banned or the caller
    /// prefers B). Otherwise as `signature(keyshare:message:chainPath:)`, without fallback.
    public func signature(keyshare: Keyshare, message: Data, chainPath: String = "m",
                          signer: TrioSigner) async throws(SilentShardError) -> Signature {
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
        let signers: [PartyIndex] = [0, signer.index]
        let signature = try await step(.sign, action: transport.actions.sign, existing: keyshare, participants: signers) { setup in
            setup.keyID = keyshare.keyIdBytes
            setup.gen = [UInt8](keyshare.generation)
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.message = messageBytes
        } body: { channel, link throws(SilentShardError) in
            let signature = try await runProtocol(channel: &channel, link: link) {
                instanceID, setupHash, _, rng throws(ProtocolError) in
                try SessionProtocolMachine.sign(keyshare, signers: signers, instanceID: instanceID, setupHash: setupHash, path: path,
                                                message: messageBytes, using: &rng)
            }
            // DONE confirms the signature to the signer (its audit); best effort.
            if let done = try? channel.control(.done, payload: signature.done.encoded) { try? await link.send([done]) }
            return signature
        }
        return try signature.signature()
    }

    // MARK: - One step

    func check(_ keyshare: Keyshare) throws(SilentShardError) {
        guard keyshare.algorithm == algorithm, keyshare.mode == .trio, keyshare.party == 0, keyshare.groupId != nil else {
            throw .invalidKeyshare(reason: "not an app keyshare of a trio \(algorithm) key")
        }
    }


    /// Makes a step's protocol run from the session's instance id, setup hash and the nodes' group id.
    typealias RunFactory<Outcome: ProtocolOutcomeValue> = ([UInt8], [UInt8], [UInt8], inout any RandomNumberGenerator)
        throws(ProtocolError) -> ProtocolRun<Outcome>

    /// One step over the shared engine: the SETUP `fill` completes, the SETUP goes out, every
    /// participating node's ACCEPT (a REJECT ends the step), then `body`. Without a keyshare (recover)
    /// `keyIdParam` is the route's key id and `groupID` the pinned group, if the caller has them.
    func step<Outcome>(_ operation: SessionOperation, action: any NetworkAction, existing: Keyshare?, participants: [PartyIndex],
                       keyIdParam: String? = nil, groupID: [UInt8]? = nil, fill: (inout SetupPayload) -> Void,
                       body: (inout PartyFrameChannel, AppStepLink) async throws(SilentShardError) -> Outcome)
        async throws(SilentShardError) -> Outcome {
        let step = AppStepEngine.Step(operation, action: action, participants: participants, params: existing?.keyId ?? keyIdParam,
                                      recordedGroup: existing?.groupId.map { [UInt8]($0) } ?? groupID)
        return try await engine.run(step, client: transport.client, fill: fill) { channel, link throws(SilentShardError) in
            try await link.send([link.setupFrame])
            // SETUP_SENT: every participating node's ACCEPT (a REJECT ends the step), then RUNNING.
            try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
                for node in link.nodes { _ = try await SessionDriver.awaitControl(.accept, from: node, channel: &channel, read: link.read) }
                // §9.4: a node this app banned takes part in nothing but reconcile and export.
                try await refuseBannedNodes(link.nodes, operation: operation, channel: &channel, send: link.send)
            }
            return try await body(&channel, link)
        }
    }

    /// Runs `body`; a failure is sent to the nodes as our ABORT (§0; not after a node's ABORT or a
    /// REJECT) and a ban it calls for is recorded (§9.4) before it is thrown.
    func aborting<T>(channel: inout PartyFrameChannel, link: AppStepLink,
                     _ body: (inout PartyFrameChannel) async throws(SilentShardError) -> T) async throws(SilentShardError) -> T {
        do {
            return try await body(&channel)
        } catch {
            if channel.peerAbort == nil, !Self.isRejection(error),
               let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                try? await link.send([frame])
            }
            await recordBanIfRequired(error, channel: channel)
            throw error
        }
    }

    /// Runs the protocol `makeRun` makes once the nodes accepted (its group id is the one their
    /// certificates carry); a failure aborts the step (`aborting`).
    func runProtocol<Outcome>(channel: inout PartyFrameChannel, link: AppStepLink,
                              _ makeRun: RunFactory<Outcome>) async throws(SilentShardError) -> Outcome {
        try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
            guard let first = link.nodes.first, let group = channel.receiver.accepts[first]?.certificate?.groupID else {
                throw .cloudVerificationFailed(reason: "certificateMissing")
            }
            let run: ProtocolRun<Outcome>
            do throws(ProtocolError) {
                var rng = SessionRandomness.system.generator()
                run = try makeRun(channel.instanceID, channel.receiver.setupHash, group, &rng)
            } catch { throw SilentShardError(error) }
            return try await SessionDriver.run(run, channel: &channel, send: link.send, read: link.read)
        }
    }

    /// §7.2 at the app (`AppCommit`, trio policy): stage durably, send COMMIT(D), promote on
    /// OUTCOME(committed, D) from every node; roll back when every node answered ABORT or
    /// OUTCOME(aborted); anything else leaves the share staged (in doubt → `reconcileRequired`).
    func commit(_ keyshare: Keyshare, channel: inout PartyFrameChannel, link: AppStepLink) async throws(SilentShardError) -> Keyshare {
        try await AppCommitExecutor.commit(keyshare, policy: .trio, nodes: link.nodes, channel: &channel,
                                           storage: { [storageClient] digest in
                                               AppCommitExecutor.Storage(storageClient, keyId: keyshare.keyId,
                                                                         staging: TrioStoredShare(keyshare: keyshare, digest: digest).stored)
                                           }, send: link.send, read: link.read)
    }

    private static func isRejection(_ error: SilentShardError) -> Bool {
        switch error {
        case .peerUnavailable, .rejected, .keyNotFound, .staleKeyshare, .deviceNotRegistered, .partyBanned: return true
        default: return false
        }
    }

    static func networkError(_ error: any Error) -> SilentShardError { AppStepEngine.networkError(error) }
}
