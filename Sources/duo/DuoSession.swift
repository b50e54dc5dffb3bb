import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The app's side of duo (app + one cloud node, 2-of-2) for one algorithm. Each operation is one step
/// (`docs/protocol/session.md` §2.1, §5.3): connect → SETUP → ACCEPT (verified under `cloudVerifyingKey`) →
/// protocol frames → for share-producing operations the commit of session.md §7.2 → disconnect.
///
/// Steps run one at a time on the session's `NetworkClient` (a client carries one connection); the
/// session is `Sendable` and may be shared between tasks.
public final class DuoSession: Sendable {
    /// The algorithm this session runs.
    public let algorithm: Keyshare.Algorithm
    /// The app's session code every mode shares (steps, commit, reconcile, bans).
    let core: AppSession
    /// The routes of this session's steps.
    let actions: any DuoNetworkActionProvider

    package init(algorithm: Keyshare.Algorithm, messageSigner: any MessageSigner, cloudVerifyingKey: String,
                 storageClient: any StorageClient, networkClient: any NetworkClient, actionProvider: any DuoNetworkActionProvider,
                 deviceClock: @escaping MillisecondClock = WallClock.milliseconds, deadlines: AppDeadlines = .system) {
        self.algorithm = algorithm
        actions = actionProvider
        core = AppSession(mode: .duo, algorithm: algorithm, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                          storageClient: storageClient, networkClient: networkClient,
                          actions: AppActions(keygen: { actionProvider.keygen }, refresh: { actionProvider.refresh },
                                              sign: { actionProvider.sign }, importKey: { actionProvider.import },
                                              reconcile: { actionProvider.reconcile }),
                          deviceClock: deviceClock, deadlines: deadlines)
    }

    // MARK: - Operations

    /// Generates a new key with the cloud node. The new keyshare is staged in storage, committed at the
    /// node, then promoted to current; it is returned only after the node confirmed.
    public func keygen() async throws(SilentShardError) -> Keyshare {
        try await core.observed(.keygen, keyId: nil) { () throws(SilentShardError) in try await core.keygen() }
    }

    /// Refreshes the shares of `keyshare`'s key (same public key, new shares and generation). Staged,
    /// committed at the node, then promoted; the old share stays current until then.
    public func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.refresh, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.refresh(keyshare)
        }
    }

    /// Imports an existing private key: the app splits it with the node (DKG import mode, the app is
    /// the importer); afterwards neither party holds the whole key. ECDSA: `privateKey` is the 32-byte
    /// big-endian secp256k1 scalar; EdDSA: the 32-byte RFC 8032 seed. `rootChainCode` is 32 bytes.
    /// Staged, committed at the node (which refuses a key id it already holds: `keyAlreadyExists`),
    /// then promoted. The caller should erase its copy of the private key afterwards.
    public func `import`(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.import, keyId: nil) { () throws(SilentShardError) in
            try await core.importKey(privateKey: privateKey, rootChainCode: rootChainCode)
        }
    }

    /// Signs `message` with the cloud node. ECDSA: `message` is exactly the 32-byte hash; EdDSA: the
    /// message itself (≤ 32,768 bytes). `chainPath` is a soft BIP32 path ("m" or "m/1/2"). The
    /// signature is verified under the derived public key before it is returned.
    public func signature(keyshare: Keyshare, message: Data, chainPath: String = "m") async throws(SilentShardError) -> Signature {
        try await core.observed(.sign, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.signature(keyshare: keyshare, message: message, chainPath: chainPath, signers: [0, 1])
        }
    }

    /// Settles the app's record for `keyId` with the node (`docs/protocol/session.md` §7.3), e.g. after
    /// `reconcileRequired` or at launch: a staged share the node committed is promoted; one it did not
    /// commit is rolled back (the node tombstones that generation first, so it can never commit it
    /// later). Returns the resulting current keyshare. Idempotent.
    ///
    /// Throws `keyNotFound` when there is no local record, `abortedKeyshare` when the first generation
    /// of a key was rolled back (there is no key), `staleKeyshare` when the node holds another
    /// generation than the app's current one, `reconcileConflict` for any other mismatch.
    public func reconcileKeyshare(keyId: String) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.reconcile, keyId: keyId) { () throws(SilentShardError) in
            try await core.reconcile(keyId: keyId)
        }
    }

    func check(_ keyshare: Keyshare) throws(SilentShardError) { try core.check(keyshare) }

    /// The session's clock: the device clock corrected by the node's, ms since the epoch.
    var sessionMilliseconds: UInt64 { core.clock.milliseconds }

    static func networkError(_ error: any Error) -> SilentShardError { AppStepEngine.networkError(error) }
}
