import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

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
        let node = try DuoNode.start()
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
