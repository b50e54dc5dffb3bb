import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Trio export over real sockets: both nodes encrypt their shares to the app's one-time key (B's
/// through A), the app reconstructs with its own share and checks x·G = P.
@Suite("Trio export over loopback WebSockets", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioExportTests {
    /// Trio export needs the explicit `export` scope at both nodes (session.md §9.3; never granted by default).
    static let scopes: Set<String> = ["keygen", "refresh", "sign", "reconcile", "export"]

    /// Without the `export` scope (the default scopes), both nodes refuse: FORBIDDEN, at A first. A
    /// token whose scope A grants but B's verifier does not: B refuses independently.
    @Test func exportNeedsTheExportScope() async throws {
        let cluster = try TrioOverWebSocketTests.startCluster(token: "t")
        let session = TrioOverWebSocketTests.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await session.export(keyshare: keyshare) }
        #expect(try cluster.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        await cluster.stop()

        // A grants export, B's own verifier does not (default scopes): B refuses independently.
        let split = try TrioOverWebSocketTests.startCluster(token: "t", scopes: Self.scopes,
                                                            verifierB: try StaticTokenVerifier(token: "t"))
        let other = TrioOverWebSocketTests.session(.eddsa, cluster: split, token: "t")
        let key = try await other.keygen()
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await other.export(keyshare: key) }
        await split.stop()
    }
    static func matches(_ exported: ExportedKey, _ keyshare: Keyshare) throws -> Bool {
        switch keyshare.algorithm {
        case .ecdsa:
            let scalar = try Secp256k1.Scalar(nonZeroBytes: [UInt8](exported.privateKey))
            return try Secp256k1.Point(base: scalar).compressed() == [UInt8](keyshare.publicKey)
        case .eddsa:
            let scalar = try Ed25519.Scalar(nonZeroBytes: [UInt8](exported.privateKey))
            return Ed25519.Point(base: scalar).bytes == [UInt8](keyshare.publicKey)
        }
    }

    /// Export, refresh, export again: the same key (the shares changed, the secret did not), and it
    /// belongs to the public key; the chain code is the keyshare's root chain code.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func exportBeforeAndAfterRefresh(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try TrioOverWebSocketTests.startCluster(token: "t", scopes: Self.scopes)
        let session = TrioOverWebSocketTests.session(algorithm, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        let exported = try await session.export(keyshare: keyshare)
        #expect(try Self.matches(exported, keyshare))
        #expect(exported.keyId == keyshare.keyId && exported.chainPath == "m" && exported.algorithm == algorithm)
        #expect(exported.chainCode == keyshare.rootChainCode)
        #expect(!exported.description.contains(Hex.encode([UInt8](exported.privateKey))))
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        let again = try await session.export(keyshare: refreshed)
        #expect(again == exported)
        await cluster.stop()
    }

    /// Export needs both nodes: with B down it fails with `peerUnavailable` and returns nothing.
    @Test func exportNeedsNodeB() async throws {
        let cluster = try TrioOverWebSocketTests.startCluster(token: "t", scopes: Self.scopes)
        let session = TrioOverWebSocketTests.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        await cluster.serverB.stop()
        await #expect(throws: SilentShardError.peerUnavailable(party: .node(1))) {
            _ = try await session.export(keyshare: keyshare)
        }
        await cluster.serverA.stop()
    }
}
