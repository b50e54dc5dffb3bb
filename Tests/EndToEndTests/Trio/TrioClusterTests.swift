import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Trio's cluster over real sockets, what only trio has: node A's inter-node link to B (`/v3/peer`,
/// subprotocol `silentshard-peer`), B's own checks, B down, hard derivation, the verifying-key endpoint of
/// each role. What both modes do over sockets is in `OverWebSocketTests`.
@Suite("Trio end to end over loopback WebSockets (nodes A and B)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioClusterTests {
    /// A hard child (ECDSA, after a refresh) signs with B under its own key.
    @Test func hardDerivationAfterRefreshSignsWithB() async throws {
        let cluster = try TrioCluster.start(token: "app-token")
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "app-token")
        let keyshare = try await session.keygen()
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        let child = try await session.hardDerivation(keyshare: refreshed, path: "m/0'/5")
        let childMessage = EndToEnd.message(.ecdsa, "hard child over sockets")
        let childSignature = try await session.signature(keyshare: child, message: childMessage, signer: .nodeB)
        #expect(try EndToEnd.verifies(childSignature, message: childMessage, keyshare: child))
        await cluster.stop()
    }

    /// Import over sockets, then a reconcile at launch (DONE path) and a signature with B.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func importReconcileSign(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try TrioCluster.start(token: "t")
        let session = TrioCluster.session(algorithm, cluster: cluster, token: "t")
        let keyshare = try await session.import(privateKey: Data(SecureRandom.bytes(count: 32)),
                                                rootChainCode: Data(SecureRandom.bytes(count: 32)))
        let settled = try await session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(settled == keyshare)
        let message = EndToEnd.message(algorithm, "imported, over sockets")
        let signature = try await session.signature(keyshare: keyshare, message: message, signer: .nodeB)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        await cluster.stop()
    }

    /// `GET /v3/verifying-key` on a trio node: the cluster key, the node key, role, group and
    /// certificate (session.md §2.2) — for operators and tests, never trust on first use.
    @Test func verifyingKeyEndpoint() async throws {
        let cluster = try TrioCluster.start(token: "t")
        for (server, role) in [(cluster.serverA, "trio-a"), (cluster.serverB, "trio-b")] {
            let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/v3/verifying-key"))
            let (data, _) = try await URLSession.shared.data(from: url)
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(json["verifying_key"] as? String == cluster.cloudVerifyingKey)
            #expect(json["node_key"] as? String == server.verifyingKeyHex)
            #expect(json["role"] as? String == role)
            let certificateHex = try #require(json["certificate"] as? String)
            let certificate = try NodeCertificate(bytes: try Hex.decode(certificateHex))
            #expect(Hex.encode(certificate.groupID) == json["group_id"] as? String)
            #expect(Hex.encode(certificate.nodeKey.bytes) == server.verifyingKeyHex)
        }
        await cluster.stop()
    }

    /// `/v3/peer` is a route only of node B's peer listener, which serves nothing else (finding 5).
    @Test func peerRouteOnlyOnThePeerListener() {
        #expect(NodeRouteTable.standard.route(for: "/v3/peer", post: false) == nil)
        let table = NodeRouteTable.peerLinkOnly
        #expect(table.route(for: "/v3/peer", post: false) == .peerLink)
        #expect(table.route(for: "/v3/peer", post: true) == nil)
        #expect(table.route(for: "/v3/trio/sign", post: false) == nil)
        #expect(table.route(for: "/v3/ecdsa/keygen", post: false) == nil)
        #expect(NodeRoute.peerLink.mode.subprotocol == "silentshard-peer")
    }

    /// session.md §6.1 rule 3: A's acceptance is never evidence for B. A accepts the app's token, forwards it in
    /// LINK_OPEN, and B — with another policy — refuses it (AUTH_INVALID, relayed by A to the app).
    @Test func nodeBChecksTheForwardedTokenItself() async throws {
        let cluster = try TrioCluster.start(token: "app-token", tokenAtB: "another-token")
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "app-token")
        do {
            _ = try await session.keygen()
            Issue.record("keygen succeeded although B refuses the token")
        } catch {
            #expect(error == .authenticationFailed(reason: "invalid token"))
        }
        await cluster.stop()
    }

    /// Node B down: A answers PEER_UNAVAILABLE (typed error at the app), nothing is promoted; A alone
    /// still co-signs (S = {0, 1}).
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func nodeBDown(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try TrioCluster.start(token: "t")
        let storage = InMemoryStorageClient()
        let session = TrioCluster.session(algorithm, cluster: cluster, token: "t", storage: storage)
        let keyshare = try await session.keygen()
        await cluster.serverB.stop()
        do {
            _ = try await session.keyRefresh(keyshare: keyshare)
            Issue.record("refresh succeeded with B down")
        } catch {
            #expect(error == .peerUnavailable(party: .node(1)))
        }
        let record = try #require(try await storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil)
        #expect(try cluster.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        #expect(try cluster.storeA.status(keyId: keyshare.keyId).preparedGen == nil)
        let message = EndToEnd.message(algorithm, "A alone")
        let signature = try await session.signature(keyshare: keyshare, message: message)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        await cluster.serverA.stop()
    }
}
