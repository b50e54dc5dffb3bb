import CloudNode
import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Trio recovery over real sockets: the app lost its share (fresh storage, same device key); A and B
/// (holders) re-share the key to all three parties; the app checks the PKI copies and the key.
@Suite("Trio recovery over loopback WebSockets", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioRecoveryTests {
    static func session(_ cluster: TrioCluster, signer: any MessageSigner,
                        storage: any StorageClient = InMemoryStorageClient()) -> TrioSession {
        SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                        websocketConfig: WebsocketConfig(url: cluster.url, authenticationToken: "t"),
                                        storageClient: storage)
    }

    static func nodeShare(_ store: NodeShareStore, _ keyId: String) throws -> DKLsKeyshare {
        let share = try #require(try store.share(keyId: keyId))
        return try Keyshare(algorithm: .ecdsa, mode: .trio, protocolBytes: try NodeShareBlob(bytes: share.bytes).protocolBytes)
            .dklsKeyshare()
    }

    @Test(arguments: [false, true])
    func recoverWithBothNodesThenSign(pinGroup: Bool) async throws {
        let cluster = try TrioCluster.start(token: "t")
        let device = SoftwareEd25519MessageSigner()
        let original = try await Self.session(cluster, signer: device).keygen()

        // The app lost everything but its device key.
        let storage = InMemoryStorageClient()
        let session = Self.session(cluster, signer: device, storage: storage)
        let recovered = try await session.recovery(keysharePublicKey: original.publicKey,
                                                   groupId: pinGroup ? original.groupId : nil)
        #expect(recovered.keyId == original.keyId && recovered.publicKey == original.publicKey)
        #expect(recovered.generation != original.generation && recovered.groupId == original.groupId)
        #expect(recovered.party == 0 && recovered.rootChainCode == original.rootChainCode)
        // Committed at all three: both nodes hold the new generation, the app's storage has it current.
        #expect(try cluster.storeA.share(keyId: original.keyId)?.gen == [UInt8](recovered.generation))
        #expect(try cluster.storeB.share(keyId: original.keyId)?.gen == [UInt8](recovered.generation))
        let record = try #require(try await storage.read(keyId: original.keyId))
        #expect(record.current != nil && record.staged == nil)

        for signer in [TrioSigner.nodeA, .nodeB] {
            let message = EndToEnd.message(.ecdsa, "after recovery with \(signer)")
            let signature = try await session.signature(keyshare: recovered, message: message, signer: signer)
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: recovered))
        }
        // The old app share is refused by the nodes and does not combine with a new node share.
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await session.signature(keyshare: original,
                                            message: EndToEnd.message(.ecdsa, "old share"))
        }
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let hash = SHA256.hash(Array("old with new".utf8))
        let key = try Secp256k1.Point(compressed: [UInt8](original.publicKey))
        let newA = try Self.nodeShare(cluster.storeA, original.keyId)
        let mixed = try? DKLsInProcess.sign([try original.dklsKeyshare(), newA], messageHash: hash, using: &rng)
        #expect(mixed.map { Secp256k1.ECDSA.verify($0, hash: hash, publicKey: key) } != true)
        let fresh = try DKLsInProcess.sign([try recovered.dklsKeyshare(), newA], messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(fresh, hash: hash, publicKey: key))
        await cluster.stop()
    }

    /// EdDSA: A and B repair the app's share and all three refresh (session.md §6.4 SHOULD-refresh); the old app
    /// share no longer works with the new node shares; signatures by both signer sets verified.
    @Test func eddsaRecoverWithBothNodesThenSign() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let device = SoftwareEd25519MessageSigner()
        func session(_ storage: any StorageClient) -> TrioSession {
            SilentShard.EdDSA.trioInitiator(messageSigner: device, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                            websocketConfig: WebsocketConfig(url: cluster.url, authenticationToken: "t"),
                                            storageClient: storage)
        }
        let original = try await session(InMemoryStorageClient()).keygen()
        let storage = InMemoryStorageClient()
        let fresh = session(storage)
        let recovered = try await fresh.recovery(keysharePublicKey: original.publicKey, groupId: original.groupId)
        #expect(recovered.keyId == original.keyId && recovered.publicKey == original.publicKey)
        #expect(recovered.generation != original.generation && recovered.groupId == original.groupId)
        #expect(recovered.rootChainCode == original.rootChainCode)
        #expect(try cluster.storeA.share(keyId: original.keyId)?.gen == [UInt8](recovered.generation))
        #expect(try cluster.storeB.share(keyId: original.keyId)?.gen == [UInt8](recovered.generation))
        let record = try #require(try await storage.read(keyId: original.keyId))
        #expect(record.current != nil && record.staged == nil)
        for signer in [TrioSigner.nodeA, .nodeB] {
            let message = EndToEnd.message(.eddsa, "after EdDSA recovery with \(signer)")
            let signature = try await fresh.signature(keyshare: recovered, message: message, signer: signer)
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: recovered))
        }
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await fresh.signature(keyshare: original, message: EndToEnd.message(.eddsa, "old share"))
        }
        let share = try #require(try cluster.storeA.share(keyId: original.keyId))
        let newA = try Keyshare(algorithm: .eddsa, mode: .trio, protocolBytes: try NodeShareBlob(bytes: share.bytes).protocolBytes)
            .frostKeyshare()
        let message = Array("old with new".utf8)
        let key = try Ed25519.VerifyingKey(bytes: [UInt8](original.publicKey))
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let mixed = try? FROST.LocalRun.sign([try original.frostKeyshare(), newA], signers: [0, 1], message: message, using: &rng)
        #expect(mixed.map { key.isValidSignature($0, for: message) } != true)
        let good = try FROST.LocalRun.sign([try recovered.frostKeyshare(), newA], signers: [0, 1], message: message, using: &rng)
        #expect(key.isValidSignature(good, for: message))
        await cluster.stop()
    }

    /// A key the nodes do not hold: KEY_NOT_FOUND (both algorithms); recover with another device key
    /// and no bound token: FORBIDDEN; signing with another device key: DEVICE_NOT_REGISTERED.
    @Test func refusals() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let device = SoftwareEd25519MessageSigner()
        let original = try await Self.session(cluster, signer: device).keygen()
        let other = try Secp256k1.Point(base: Secp256k1.Scalar(nonZeroBytes: [UInt8](repeating: 7, count: 32))).compressed()
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) {
            _ = try await Self.session(cluster, signer: device).recovery(keysharePublicKey: Data(other))
        }
        // Another device key without a token bound to it (session.md §9.3): FORBIDDEN.
        await #expect(throws: SilentShardError.authorizationDenied) {
            _ = try await Self.session(cluster, signer: SoftwareEd25519MessageSigner())
                .recovery(keysharePublicKey: original.publicKey)
        }
        // Another device key signing: not registered.
        await #expect(throws: SilentShardError.deviceNotRegistered) {
            _ = try await Self.session(cluster, signer: SoftwareEd25519MessageSigner())
                .signature(keyshare: original, message: EndToEnd.message(.ecdsa, "other device"))
        }
        let eddsa = TrioCluster.session(.eddsa, cluster: cluster, token: "t")
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) {
            _ = try await eddsa.recovery(keysharePublicKey: Data(Ed25519.Point(base: Ed25519.Scalar.random()).bytes))
        }
        // The key is untouched by the refusals.
        #expect(try cluster.storeA.share(keyId: original.keyId)?.gen == [UInt8](original.generation))
        await cluster.stop()
    }
}
