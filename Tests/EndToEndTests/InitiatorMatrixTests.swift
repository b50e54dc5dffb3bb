import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo
import trio

/// A `DuoNetworkClient` subclass as the seed shows it: hooks `connect` to log the route (never
/// content) and counts what it sends.
final class LoggingDuoClient: DuoNetworkClient, @unchecked Sendable {
    private let log = LockedValue<[String]>([])
    var routes: [String] { log.withLock { $0 } }

    override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        log.withLock { $0.append("/v3/\(websocketAction.algorithm)/\(websocketAction.action)") }  // the route it opens
        try await super.connect(websocketAction: websocketAction, params: params)
    }
}

/// The app's own duo action provider (the third overload): the stock routes, built by the app.
struct AppRoutedActions: DuoNetworkActionProvider {
    let algorithm: Keyshare.Algorithm
    var keygen: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Keygen() : DuoAction.EdDSA.Keygen() }
    var reconcile: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Reconcile() : DuoAction.EdDSA.Reconcile() }
    var refresh: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.KeyRefresh() : DuoAction.EdDSA.KeyRefresh() }
    var sign: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Signature() : DuoAction.EdDSA.Signature() }
    var `import`: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Import() : DuoAction.EdDSA.Import() }
}

/// The app's own trio action provider (the third overload): the stock routes, built by the app.
struct AppRoutedTrioActions: TrioNetworkActionProvider {
    let algorithm: Keyshare.Algorithm
    var ecdsa: Bool { algorithm == .ecdsa }
    var keygen: NetworkAction { ecdsa ? TrioAction.ECDSA.Keygen() : TrioAction.EdDSA.Keygen() }
    var reconcile: NetworkAction { ecdsa ? TrioAction.ECDSA.Reconcile() : TrioAction.EdDSA.Reconcile() }
    var refresh: NetworkAction { ecdsa ? TrioAction.ECDSA.KeyRefresh() : TrioAction.EdDSA.KeyRefresh() }
    var hardDerivation: NetworkAction { TrioAction.ECDSA.HardDerivation() }
    var sign: NetworkAction { ecdsa ? TrioAction.ECDSA.Signature() : TrioAction.EdDSA.Signature() }
    var preSign: NetworkAction { ecdsa ? TrioAction.ECDSA.PreSignature() : TrioAction.EdDSA.PreSignature() }
    var preSignFinal: NetworkAction { ecdsa ? TrioAction.ECDSA.PreSignatureFinal() : TrioAction.EdDSA.PreSignatureFinal() }
    var recover: NetworkAction { ecdsa ? TrioAction.ECDSA.Recovery() : TrioAction.EdDSA.Recovery() }
    var export: NetworkAction { ecdsa ? TrioAction.ECDSA.Export() : TrioAction.EdDSA.Export() }
    var `import`: NetworkAction { ecdsa ? TrioAction.ECDSA.Import() : TrioAction.EdDSA.Import() }
}

/// The operations of every mode × both algorithms × all three initiator overloads (`websocketConfig`,
/// the mode's `NetworkClient` class, a `NetworkClient` with the app's action provider), over real
/// loopback sockets against the node server(s) and their SQLite stores. Every signature is verified
/// (libsecp256k1 verify + public-key recovery; libsodium Ed25519), under the derived child key for soft
/// paths. Trio's own operations (presignatures, export, hard derivation, recovery) per overload are in
/// `Trio/TrioOperationsMatrixTests`.
@Suite("End to end: every operation × algorithm × initiator overload (both modes)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct InitiatorMatrixTests {
    enum Overload: String, CaseIterable, Sendable { case websocketConfig, networkClient, networkClientAndProvider }

    static let cases: [(Keyshare.Mode, Overload, Keyshare.Algorithm)] = [Keyshare.Mode.duo, .trio].flatMap { mode in
        Overload.allCases.flatMap { o in [(mode, o, .ecdsa), (mode, o, .eddsa)] }
    }
    /// Every scope a node grants (the matrix runs every operation of the mode).
    static let allScopes: Set<String> = ["keygen", "reconcile", "refresh", "sign", "preSign", "preSignFinal", "recover",
                                         "export", "import", "hardDerivation"]

    /// The app session for `overload`: the mode's initiator; the `networkClient` overload is duo's
    /// logging subclass (`duoLog`) or a plain `TrioNetworkClient`.
    static func session(_ mode: Keyshare.Mode, _ overload: Overload, _ algorithm: Keyshare.Algorithm, signer: any MessageSigner,
                        cloudKey: String, config: WebsocketConfig, storage: any StorageClient,
                        duoLog: LoggingDuoClient) -> AppOverSockets {
        switch mode {
        case .duo: .duo(duoSession(overload, algorithm, signer: signer, cloudKey: cloudKey, config: config, storage: storage,
                                   logging: duoLog))
        case .trio: .trio(trioSession(overload, algorithm, signer: signer, cloudKey: cloudKey, config: config, storage: storage))
        }
    }

    static func duoSession(_ overload: Overload, _ algorithm: Keyshare.Algorithm, signer: any MessageSigner, cloudKey: String,
                           config: WebsocketConfig, storage: any StorageClient, logging: LoggingDuoClient) -> DuoSession {
        switch (overload, algorithm) {
        case (.websocketConfig, .ecdsa):
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                           storageClient: storage)
        case (.websocketConfig, .eddsa):
            SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                           storageClient: storage)
        case (.networkClient, .ecdsa):
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: logging,
                                           storageClient: storage)
        case (.networkClient, .eddsa):
            SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: logging,
                                           storageClient: storage)
        case (.networkClientAndProvider, .ecdsa):
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                                           networkClient: DuoNetworkClient(websocketConfig: config),
                                           actionProvider: AppRoutedActions(algorithm: .ecdsa))
        case (.networkClientAndProvider, .eddsa):
            SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                                           networkClient: DuoNetworkClient(websocketConfig: config),
                                           actionProvider: AppRoutedActions(algorithm: .eddsa))
        }
    }

    static func trioSession(_ overload: Overload, _ algorithm: Keyshare.Algorithm, signer: any MessageSigner, cloudKey: String,
                            config: WebsocketConfig, storage: any StorageClient) -> TrioSession {
        switch (overload, algorithm) {
        case (.websocketConfig, .ecdsa):
            SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                            storageClient: storage)
        case (.websocketConfig, .eddsa):
            SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                            storageClient: storage)
        case (.networkClient, .ecdsa):
            SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                            networkClient: TrioNetworkClient(websocketConfig: config), storageClient: storage)
        case (.networkClient, .eddsa):
            SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                            networkClient: TrioNetworkClient(websocketConfig: config), storageClient: storage)
        case (.networkClientAndProvider, .ecdsa):
            SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                                            networkClient: TrioNetworkClient(websocketConfig: config),
                                            actionProvider: AppRoutedTrioActions(algorithm: .ecdsa))
        case (.networkClientAndProvider, .eddsa):
            SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                                            networkClient: TrioNetworkClient(websocketConfig: config),
                                            actionProvider: AppRoutedTrioActions(algorithm: .eddsa))
        }
    }

    /// A known private key for `algorithm` and the public key it must import as.
    static func knownKey(_ algorithm: Keyshare.Algorithm) throws -> (privateKey: [UInt8], publicKey: [UInt8]) {
        switch algorithm {
        case .ecdsa:
            let x = Secp256k1.Scalar.random()
            return (x.bytes, try Secp256k1.Point(base: x).compressed())
        case .eddsa:
            let seed = SecureRandom.bytes(count: 32)
            return (seed, try Ed25519.SigningKey(seed: seed).verifyingKey.bytes)
        }
    }

    /// libsecp256k1 verify + public-key recovery, or libsodium strict Ed25519 (`Signature.isValid`), under
    /// `keyshare`'s child key at `path`.
    static func expectVerified(_ signature: Signature, _ message: Data, _ keyshare: Keyshare, path: String = "m",
                               _ comment: Comment) throws {
        let child = try keyshare.childPublicKey(path: path)
        #expect(signature.algorithm == keyshare.algorithm && signature.isValid(for: message, publicKey: child), comment)
    }

    @Test(arguments: cases)
    func everyOperation(mode: Keyshare.Mode, overload: Overload, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try EndToEndFixture(mode: mode, token: "matrix", scopes: Self.allScopes)
        let config = WebsocketConfig(url: fixture.url, authenticationToken: "matrix")
        // P-256 device keys on one overload, Ed25519 on the others: both signer types end to end.
        let signer: any MessageSigner = overload == .networkClient ? SoftwareP256MessageSigner() : SoftwareEd25519MessageSigner()
        let logging = LoggingDuoClient(websocketConfig: config)
        let session = Self.session(mode, overload, algorithm, signer: signer, cloudKey: fixture.cloudVerifyingKey, config: config,
                                   storage: InMemoryStorageClient(), duoLog: logging)
        func message(_ text: String) -> Data { EndToEnd.message(algorithm, text) }
        let label = "\(mode) \(overload) \(algorithm)"

        // keygen; sign with each signer set of the mode (duo: the node; trio: A, B), at the root and under a soft path
        let keyshare = try await session.keygen()
        #expect(keyshare.partyCount == fixture.partyCount && keyshare.threshold == 2 && keyshare.mode == mode)
        for signer in fixture.signers {
            let root = message("root \(String(describing: signer))"), child = message("child \(String(describing: signer))")
            try Self.expectVerified(try await session.signature(keyshare: keyshare, message: root, signer: signer), root, keyshare,
                                    "\(label) root \(String(describing: signer))")
            try Self.expectVerified(try await session.signature(keyshare: keyshare, message: child, chainPath: "m/0/7", signer: signer),
                                    child, keyshare, path: "m/0/7", "\(label) child \(String(describing: signer))")
        }
        // reconcile on a settled key returns it unchanged
        let reconciled = try await session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation && reconciled.publicKey == keyshare.publicKey)
        // refresh: same key, new generation; the new share signs, the old one is refused (stale)
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey && refreshed.generation != keyshare.generation)
        try Self.expectVerified(try await session.signature(keyshare: refreshed, message: message("refreshed")), message("refreshed"),
                                refreshed, "\(label) refreshed")
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await session.signature(keyshare: keyshare, message: message("stale"))
        }
        // import a known private key: the imported key is that key and signs with each signer set
        let known = try Self.knownKey(algorithm)
        let imported = try await session.import(privateKey: Data(known.privateKey), rootChainCode: Data(SecureRandom.bytes(count: 32)))
        #expect(Array(imported.publicKey) == known.publicKey)
        for signer in fixture.signers {
            let text = message("imported \(String(describing: signer))")
            try Self.expectVerified(try await session.signature(keyshare: imported, message: text, signer: signer), text, imported,
                                    "\(label) imported \(String(describing: signer))")
        }

        // duo's logging subclass saw every route it opened, keygen first
        if mode == .duo, overload == .networkClient {
            let a = algorithm == .ecdsa ? "ecdsa" : "eddsa"
            #expect(logging.routes.first == "/v3/\(a)/keygen")
            #expect(Set(logging.routes) == Set(["keygen", "sign", "reconcile", "refresh", "import"].map { "/v3/\(a)/\($0)" }))
        }
        await fixture.stop()
    }
}
