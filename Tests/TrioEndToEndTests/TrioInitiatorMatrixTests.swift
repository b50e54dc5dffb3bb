import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

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

/// Every trio operation × both algorithms × all three `trioInitiator` overloads, over real loopback
/// sockets against two node servers (A relays to B over `/v3/peer`). Every signature is verified
/// (libsecp256k1 verify + public-key recovery; libsodium Ed25519), under the derived child key for
/// soft paths.
@Suite("Trio end to end: every operation × algorithm × initiator overload", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioInitiatorMatrixTests {
    enum Overload: String, CaseIterable, Sendable { case websocketConfig, trioNetworkClient, networkClientAndProvider }

    static let cases: [(Overload, Keyshare.Algorithm)] = Overload.allCases.flatMap { o in [(o, .ecdsa), (o, .eddsa)] }
    static let allScopes: Set<String> = ["keygen", "reconcile", "refresh", "sign", "preSign", "preSignFinal", "recover",
                                         "export", "import", "hardDerivation"]

    static func session(_ overload: Overload, _ algorithm: Keyshare.Algorithm, signer: any MessageSigner, cloudKey: String,
                        config: WebsocketConfig, storage: any StorageClient) -> TrioSession {
        switch (overload, algorithm) {
        case (.websocketConfig, .ecdsa):
            SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                            storageClient: storage)
        case (.websocketConfig, .eddsa):
            SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                            storageClient: storage)
        case (.trioNetworkClient, .ecdsa):
            SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey,
                                            networkClient: TrioNetworkClient(websocketConfig: config), storageClient: storage)
        case (.trioNetworkClient, .eddsa):
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

    @Test(arguments: cases)
    func everyOperation(overload: Overload, algorithm: Keyshare.Algorithm) async throws {
        let cluster = try TrioOverWebSocketTests.startCluster(token: "matrix", scopes: Self.allScopes)
        let config = WebsocketConfig(url: cluster.url, authenticationToken: "matrix")
        // P-256 device keys on one overload, Ed25519 on the others: both signer types end to end.
        let signer: any MessageSigner = overload == .trioNetworkClient ? SoftwareP256MessageSigner() : SoftwareEd25519MessageSigner()
        let session = Self.session(overload, algorithm, signer: signer, cloudKey: cluster.cloudVerifyingKey, config: config,
                                   storage: InMemoryStorageClient())
        func message(_ text: String) -> Data {
            algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
        }
        func expectVerified(_ signature: Signature, _ text: String, _ keyshare: Keyshare, path: String = "m") throws {
            let child = try childPublicKey(keyshare, path: path)
            #expect(verifies(signature, message: message(text), key: child, algorithm: algorithm),
                    "\(overload) \(algorithm) \(text) \(path)")
        }

        // keygen; sign with A and with B, at the root and under a soft path
        let keyshare = try await session.keygen()
        #expect(keyshare.partyCount == 3 && keyshare.threshold == 2 && keyshare.mode == .trio)
        for signer in [TrioSigner.nodeA, .nodeB] {
            try expectVerified(try await session.signature(keyshare: keyshare, message: message("root \(signer)"), signer: signer),
                               "root \(signer)", keyshare)
            try expectVerified(try await session.signature(keyshare: keyshare, message: message("child \(signer)"),
                                                           chainPath: "m/0/7", signer: signer),
                               "child \(signer)", keyshare, path: "m/0/7")
        }
        // reconcile on a settled key returns it unchanged
        let reconciled = try await session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation && reconciled.publicKey == keyshare.publicKey)
        // refresh: same key, new generation; the old share is refused
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey && refreshed.generation != keyshare.generation)
        try expectVerified(try await session.signature(keyshare: refreshed, message: message("refreshed")), "refreshed", refreshed)
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await session.signature(keyshare: keyshare, message: message("stale"))
        }
        // presignature with each node, finished over one POST, under a soft path
        for signer in [TrioSigner.nodeA, .nodeB] {
            let presignature = try await session.preSignature(keyshare: refreshed, chainPath: "m/3", signer: signer)
            try expectVerified(try await session.preSignatureFinal(preSignature: presignature, message: message("final \(signer)")),
                               "final \(signer)", refreshed, path: "m/3")
        }
        // export: the whole key belongs to the public key
        let exported = try await session.export(keyshare: refreshed)
        #expect(exported.publicKey == refreshed.publicKey && exportedMatches(exported, algorithm: algorithm))
        // hard derivation (ECDSA; EdDSA has none)
        if algorithm == .ecdsa {
            let child = try await session.hardDerivation(keyshare: refreshed, path: "m/44'/0'/2'")
            #expect(child.keyId != refreshed.keyId)
            try expectVerified(try await session.signature(keyshare: child, message: message("hard"), signer: .nodeB),
                               "hard", child)
        } else {
            await #expect(throws: SilentShardError.unsupportedOperation) {
                _ = try await session.hardDerivation(keyshare: refreshed, path: "m/44'/0'/2'")
            }
        }
        // recovery with fresh storage and the same device key, then sign with both nodes
        let recovering = Self.session(overload, algorithm, signer: signer, cloudKey: cluster.cloudVerifyingKey, config: config,
                                      storage: InMemoryStorageClient())
        let recovered = try await recovering.recovery(keysharePublicKey: refreshed.publicKey)
        #expect(recovered.publicKey == refreshed.publicKey && recovered.generation != refreshed.generation)
        for signer in [TrioSigner.nodeA, .nodeB] {
            try expectVerified(try await recovering.signature(keyshare: recovered, message: message("recovered \(signer)"),
                                                              signer: signer), "recovered \(signer)", recovered)
        }
        // import a known private key: the imported key is that key and signs with both nodes
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
        for signer in [TrioSigner.nodeA, .nodeB] {
            try expectVerified(try await session.signature(keyshare: imported, message: message("imported \(signer)"),
                                                           signer: signer), "imported \(signer)", imported)
        }
        await cluster.stop()
    }

    func exportedMatches(_ exported: ExportedKey, algorithm: Keyshare.Algorithm) -> Bool {
        switch algorithm {
        case .ecdsa:
            guard let x = try? Secp256k1.Scalar(nonZeroBytes: [UInt8](exported.privateKey)) else { return false }
            return (try? Secp256k1.Point(base: x).compressed()) == [UInt8](exported.publicKey)
        case .eddsa:
            guard let x = try? Ed25519.Scalar(nonZeroBytes: [UInt8](exported.privateKey)) else { return false }
            return Ed25519.Point(base: x).bytes == [UInt8](exported.publicKey)
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
