import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

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

/// The app's own action provider (the third overload): the stock routes, built by the app.
struct AppRoutedActions: DuoNetworkActionProvider {
    let algorithm: Keyshare.Algorithm
    var keygen: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Keygen() : DuoAction.EdDSA.Keygen() }
    var reconcile: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Reconcile() : DuoAction.EdDSA.Reconcile() }
    var refresh: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.KeyRefresh() : DuoAction.EdDSA.KeyRefresh() }
    var sign: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Signature() : DuoAction.EdDSA.Signature() }
    var `import`: NetworkAction { algorithm == .ecdsa ? DuoAction.ECDSA.Import() : DuoAction.EdDSA.Import() }
}

/// Every duo operation × both algorithms × all three `duoInitiator` overloads, over real loopback
/// sockets against the node server and its SQLite store. Every signature is verified (libsecp256k1
/// verify + public-key recovery; libsodium Ed25519), under the derived child key for soft paths.
@Suite("Duo end to end: every operation × algorithm × initiator overload", .serialized, .heavy, .timeLimit(.minutes(30)))
struct InitiatorMatrixTests {
    enum Overload: String, CaseIterable, Sendable { case websocketConfig, duoNetworkClient, networkClientAndProvider }

    static let cases: [(Overload, Keyshare.Algorithm)] = Overload.allCases.flatMap { o in [(o, .ecdsa), (o, .eddsa)] }

    @Test(arguments: cases)
    func everyOperation(overload: Overload, algorithm: Keyshare.Algorithm) async throws {
        let node = try DuoOverWebSocketTests.startNode()
        defer { Task { await node.server.stop() } }
        let config = WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)")
        let cloudKey = Hex.encode(node.key.verifyingKey.bytes)
        let storage = InMemoryStorageClient()
        // P-256 device keys on one overload, Ed25519 on the others: both signer types end to end.
        let signer: any MessageSigner = overload == .duoNetworkClient ? SoftwareP256MessageSigner() : SoftwareEd25519MessageSigner()
        let logging = LoggingDuoClient(websocketConfig: config)
        let session: DuoSession
        switch (overload, algorithm) {
        case (.websocketConfig, .ecdsa):
            session = SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                                     websocketConfig: config, storageClient: storage)
        case (.websocketConfig, .eddsa):
            session = SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                                     websocketConfig: config, storageClient: storage)
        case (.duoNetworkClient, .ecdsa):
            session = SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                                     networkClient: logging, storageClient: storage)
        case (.duoNetworkClient, .eddsa):
            session = SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                                     networkClient: logging, storageClient: storage)
        case (.networkClientAndProvider, .ecdsa):
            session = SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                                                     networkClient: DuoNetworkClient(websocketConfig: config),
                                                     actionProvider: AppRoutedActions(algorithm: .ecdsa))
        case (.networkClientAndProvider, .eddsa):
            session = SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                                                     networkClient: DuoNetworkClient(websocketConfig: config),
                                                     actionProvider: AppRoutedActions(algorithm: .eddsa))
        }
        func message(_ text: String) -> Data {
            algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
        }
        func expectVerified(_ signature: Signature, _ text: String, _ keyshare: Keyshare, path: String = "m") throws {
            let child = try childPublicKey(keyshare, path: path)
            #expect(verifies(signature, message: message(text), key: child, algorithm: algorithm), "\(overload) \(algorithm) \(text) \(path)")
        }

        // keygen, sign at the root and under a soft path
        let keyshare = try await session.keygen()
        try expectVerified(try await session.signature(keyshare: keyshare, message: message("root")), "root", keyshare)
        try expectVerified(try await session.signature(keyshare: keyshare, message: message("child"), chainPath: "m/0/7"),
                           "child", keyshare, path: "m/0/7")
        // reconcile on a settled key returns it unchanged
        let reconciled = try await session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation && reconciled.publicKey == keyshare.publicKey)
        // refresh: same key, new generation; the new share signs, the node no longer has the old one
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey && refreshed.generation != keyshare.generation)
        try expectVerified(try await session.signature(keyshare: refreshed, message: message("refreshed")), "refreshed", refreshed)
        await #expect(throws: SilentShardError.self) {
            _ = try await session.signature(keyshare: keyshare, message: message("stale"))
        }
        // import a known private key: the imported key is that key and signs
        let privateKey: [UInt8], expectedPublicKey: [UInt8]
        switch algorithm {
        case .ecdsa:
            let x = Secp256k1.Scalar.random()
            privateKey = x.bytes
            expectedPublicKey = try Secp256k1.Point(base: x).compressed()
        case .eddsa:
            let seed = SecureRandom.bytes(count: 32)
            privateKey = seed
            expectedPublicKey = try Ed25519.SigningKey(seed: seed).verifyingKey.bytes
        }
        let imported = try await session.import(privateKey: Data(privateKey), rootChainCode: Data(SecureRandom.bytes(count: 32)))
        #expect(Array(imported.publicKey) == expectedPublicKey)
        try expectVerified(try await session.signature(keyshare: imported, message: message("imported")), "imported", imported)

        if overload == .duoNetworkClient {
            let a = algorithm == .ecdsa ? "ecdsa" : "eddsa"
            #expect(logging.routes.first == "/v3/\(a)/keygen")
            #expect(Set(logging.routes) == Set(["keygen", "sign", "reconcile", "refresh", "import"].map { "/v3/\(a)/\($0)" }))
        }
    }

    func childPublicKey(_ keyshare: Keyshare, path: String) throws -> [UInt8] {
        [UInt8](try keyshare.childPublicKey(path: path))
    }

    /// libsecp256k1 verify + public-key recovery, or libsodium strict Ed25519 (`Signature.isValid`).
    func verifies(_ signature: Signature, message: Data, key publicKey: [UInt8], algorithm: Keyshare.Algorithm) -> Bool {
        signature.algorithm == algorithm && signature.isValid(for: message, publicKey: Data(publicKey))
    }
}

/// A subclass that rewrites a route (as the seed's example does): here to an action the node does not
/// serve, so the step fails with the typed handshake error, and the node keeps serving.
final class RewritingDuoClient: DuoNetworkClient, @unchecked Sendable {
    override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        let routed: DuoNetworkAction = websocketAction.action == "keygen"
            ? DuoAction.ECDSA.Keygen(action: "keygen-v9") : websocketAction
        try await super.connect(websocketAction: routed, params: params)
    }
}

@Suite("Duo end to end: a subclass rewriting a route", .heavy, .timeLimit(.minutes(30)))
struct RouteRewriteTests {
    @Test func rewrittenToAnUnservedRouteIsATypedErrorAndTheNodeKeepsServing() async throws {
        let node = try DuoOverWebSocketTests.startNode()
        let config = WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)")
        let cloudKey = Hex.encode(node.key.verifyingKey.bytes)
        let rewritten = SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                                       networkClient: RewritingDuoClient(websocketConfig: config),
                                                       storageClient: InMemoryStorageClient())
        await #expect(throws: SilentShardError.network(.handshakeRejected(status: 404))) { _ = try await rewritten.keygen() }
        let plain = SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                                   websocketConfig: config, storageClient: InMemoryStorageClient())
        let keyshare = try await plain.keygen()
        #expect(keyshare.publicKey.count == 33)
        await node.server.stop()
    }
}
