import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Trio export over real sockets, what only trio's export has: both nodes must grant it (the `export`
/// scope at A and, independently, at B) and both must be up. Export before and after a refresh in both
/// modes: `ExportTests`.
@Suite("Trio export over loopback WebSockets: both nodes", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioExportNodesTests {
    static var scopes: Set<String> { ExportTests.trioScopes }

    /// Without the `export` scope (the default scopes), both nodes refuse: FORBIDDEN, at A first. A
    /// token whose scope A grants but B's verifier does not: B refuses independently.
    @Test func exportNeedsTheExportScope() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await session.export(keyshare: keyshare) }
        #expect(try cluster.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        await cluster.stop()

        // A grants export, B's own verifier does not (default scopes): B refuses independently.
        let split = try TrioCluster.start(token: "t", scopes: Self.scopes,
                                                            verifierB: try StaticTokenVerifier(token: "t"))
        let other = TrioCluster.session(.eddsa, cluster: split, token: "t")
        let key = try await other.keygen()
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await other.export(keyshare: key) }
        await split.stop()
    }
    /// Export needs both nodes: with B down it fails with `peerUnavailable` and returns nothing.
    @Test func exportNeedsNodeB() async throws {
        let cluster = try TrioCluster.start(token: "t", scopes: Self.scopes)
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        await cluster.serverB.stop()
        await #expect(throws: SilentShardError.peerUnavailable(party: .node(1))) {
            _ = try await session.export(keyshare: keyshare)
        }
        await cluster.serverA.stop()
    }
}
