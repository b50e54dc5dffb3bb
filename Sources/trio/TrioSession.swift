import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Which cloud node co-signs with the app (`docs/protocol/session.md` §6.3).
public enum TrioSigner: Sendable, Equatable {
    /// S = {0, 1}: node A, the entry point (the default: no extra hop).
    case nodeA
    /// S = {0, 2}: node B, with A as a pure relay that sees only ciphertext of the app–B exchange.
    case nodeB

    var index: PartyIndex { self == .nodeA ? 1 : 2 }
}

/// The app's side of trio (app + node A + node B, 2-of-3) for one algorithm. Each operation is one
/// step over one connection to node A (`docs/protocol/session.md` §2.1, §5.3, §6): connect → SETUP →
/// ACCEPTs of the participating nodes (each certified by the cluster key, the app's
/// `cloudVerifyingKey`, and of one `group_id`) → protocol frames (B's relayed by A, its P2P traffic
/// end-to-end encrypted) → for share-producing operations the commit of session.md §7.2 → disconnect.
///
/// Steps run one at a time on the session's `NetworkClient`; the session is `Sendable`.
public final class TrioSession: Sendable {
    /// The algorithm this session runs.
    public let algorithm: Keyshare.Algorithm
    /// The routes of this session's steps.
    let actions: any TrioNetworkActionProvider
    /// The app's session code every mode shares (steps, commit, reconcile, bans).
    let core: AppSession

    package init(algorithm: Keyshare.Algorithm, messageSigner: any MessageSigner, cloudVerifyingKey: String,
                 storageClient: any StorageClient, networkClient: any NetworkClient, actionProvider: any TrioNetworkActionProvider,
                 deviceClock: @escaping MillisecondClock = WallClock.milliseconds, deadlines: AppDeadlines = .system) {
        self.algorithm = algorithm
        actions = actionProvider
        core = AppSession(mode: .trio, algorithm: algorithm, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                          storageClient: storageClient, networkClient: networkClient,
                          actions: AppActions(keygen: { actionProvider.keygen }, refresh: { actionProvider.refresh },
                                              sign: { actionProvider.sign }, importKey: { actionProvider.import },
                                              reconcile: { actionProvider.reconcile }),
                          deviceClock: deviceClock, deadlines: deadlines)
    }

    // MARK: - Operations

    /// Generates a new 2-of-3 key with nodes A and B. The keyshare records the nodes' `group_id`; it
    /// is staged in storage, committed at both nodes, then promoted, and returned only after both
    /// nodes confirmed.
    public func keygen() async throws(SilentShardError) -> Keyshare {
        try await core.observed(.keygen, keyId: nil) { () throws(SilentShardError) in try await core.keygen() }
    }

    /// Refreshes the shares of `keyshare`'s key at all three parties (same public key, new shares and
    /// generation). Staged, committed at both nodes, then promoted; the old share stays current until then.
    public func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.refresh, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.refresh(keyshare)
        }
    }

    /// Signs `message` with node A (S = {0, 1}); if A answers SIGNER_UNAVAILABLE (its share missing
    /// or its operator's policy, session.md §6.3) or this app has banned A (session.md §9.4), signs with node B instead
    /// (S = {0, 2}, A relaying). ECDSA:
    /// `message` is exactly the 32-byte hash; EdDSA: the message (≤ 32,768 bytes). `chainPath` is a
    /// soft BIP32 path ("m" or "m/1/2"). The signature is verified under the derived public key
    /// before it is returned.
    public func signature(keyshare: Keyshare, message: Data, chainPath: String = "m") async throws(SilentShardError) -> Signature {
        try await core.observed(.sign, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await signWithFallback(keyshare, message: message, chainPath: chainPath)
        }
    }

    private func signWithFallback(_ keyshare: Keyshare, message: Data,
                                  chainPath: String) async throws(SilentShardError) -> Signature {
        do {
            return try await sign(keyshare, message: message, chainPath: chainPath, signer: .nodeA)
        } catch .peerUnavailable(party: .node(1)?) {
            return try await sign(keyshare, message: message, chainPath: chainPath, signer: .nodeB)
        } catch .partyBanned(party: .node(1)?) {
            // session.md §9.4: this app banned A; B signs (A relays ciphertext only).
            return try await sign(keyshare, message: message, chainPath: chainPath, signer: .nodeB)
        }
    }

    /// Signs `message` with the given co-signer (session.md §6.3: e.g. `.nodeB` when A is banned or the caller
    /// prefers B). Otherwise as `signature(keyshare:message:chainPath:)`, without fallback.
    public func signature(keyshare: Keyshare, message: Data, chainPath: String = "m",
                          signer: TrioSigner) async throws(SilentShardError) -> Signature {
        try await core.observed(.sign, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await sign(keyshare, message: message, chainPath: chainPath, signer: signer)
        }
    }

    private func sign(_ keyshare: Keyshare, message: Data, chainPath: String,
                      signer: TrioSigner) async throws(SilentShardError) -> Signature {
        try await core.signature(keyshare: keyshare, message: message, chainPath: chainPath, signers: [0, signer.index])
    }

    /// Imports an existing private key into a 2-of-3 sharing with nodes A and B (DKG import mode, the
    /// app is the importer); afterwards no party holds the whole key. ECDSA: `privateKey` is the
    /// 32-byte big-endian secp256k1 scalar; EdDSA: the 32-byte RFC 8032 seed. `rootChainCode` is 32
    /// bytes. Staged, committed at both nodes (which refuse a key id they hold: `keyAlreadyExists`),
    /// then promoted. The caller should erase its copy of the private key afterwards.
    public func `import`(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.import, keyId: nil) { () throws(SilentShardError) in
            try await core.importKey(privateKey: privateKey, rootChainCode: rootChainCode)
        }
    }

    /// Settles the app's record for `keyId` with nodes A and B, e.g. after `reconcileRequired` or at
    /// launch: a staged share both nodes hold (committed, or PREPARED under the same digest) is
    /// committed and promoted; one that no node committed and at least one lacks is rolled back (the
    /// nodes tombstone it first, so it can never be committed later). Returns the resulting current
    /// keyshare. Idempotent.
    ///
    /// Throws `keyNotFound` without a local record, `abortedKeyshare` when the first generation of a
    /// key was rolled back, `staleKeyshare` when the nodes hold another generation than the app's
    /// current one, `reconcileConflict` for any other mix (an operator case).
    public func reconcileKeyshare(keyId: String) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.reconcile, keyId: keyId) { () throws(SilentShardError) in
            try await core.reconcile(keyId: keyId)
        }
    }

    func check(_ keyshare: Keyshare) throws(SilentShardError) { try core.check(keyshare) }

    static func networkError(_ error: any Error) -> SilentShardError { AppStepEngine.networkError(error) }
}
