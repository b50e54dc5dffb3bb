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

/// The trio SDK against two real nodes: `trioInitiator(websocketConfig:)` → WebSocket → node A's
/// libwebsockets server (`/v3/trio/…`) → A's inter-node link (WebSocket to B's `/v3/peer`,
/// subprotocol `silentshard-peer`) → node B. Each node has its own key, certificate and database.
@Suite("Trio end to end over loopback WebSockets (nodes A and B)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioOverWebSocketTests {
    struct Cluster {
        let clusterKey: Ed25519.SigningKey
        let serverA: NodeServer
        let serverB: NodeServer
        let storeA: NodeShareStore
        let storeB: NodeShareStore

        var cloudVerifyingKey: String { Hex.encode(clusterKey.verifyingKey.bytes) }
        var url: String { "ws://127.0.0.1:\(serverA.port)" }

        func stop() async {
            await serverA.stop()
            await serverB.stop()
        }
    }

    static func store() throws -> NodeShareStore {
        let directory = NSTemporaryDirectory() + "silentshard-trio-e2e-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
    }

    static func identity(_ role: NodeCertificate.Role, group: [UInt8], clusterKey: Ed25519.SigningKey) throws -> TrioNodeIdentity {
        let key = Ed25519.SigningKey()
        let now = UInt64(Date().timeIntervalSince1970)
        let certificate = NodeCertificate(role: role, groupID: group, nodeKey: key.verifyingKey, notBefore: now - 60,
                                          notAfter: now + 30 * 86_400, serial: 7, issuer: clusterKey)
        return try TrioNodeIdentity(nodeKey: key, certificate: certificate, clusterKey: clusterKey.verifyingKey)
    }

    /// Starts B, then A linked to B. A checks the app token; B checks the token A forwards.
    /// `scopes`: granted by both nodes' static token verifiers (nil: the default, all but export);
    /// `verifier`: used by both nodes instead (e.g. a JWT verifier). B verifies the forwarded token with
    /// its own verifier and authorizes with its principal, independently of A.
    /// `databases`: the stores of A and B (default: a fresh SQLite file each), opened with `masterKey`
    /// (default: a random one each).
    static func startCluster(token: String, tokenAtB: String? = nil, scopes: Set<String>? = nil,
                             verifier: (any TokenVerifier)? = nil, verifierB: (any TokenVerifier)? = nil,
                             databases: (a: NodeStoreLocation, b: NodeStoreLocation)? = nil,
                             masterKey: NodeMasterKey? = nil) throws -> Cluster {
        let clusterKey = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
        let identityA = try identity(.trioA, group: group, clusterKey: clusterKey)
        let identityB = try identity(.trioB, group: group, clusterKey: clusterKey)
        let storeA = try databases.map { try NodeShareStore(location: $0.a, masterKey: masterKey ?? .random()) } ?? store()
        let storeB = try databases.map { try NodeShareStore(location: $0.b, masterKey: masterKey ?? .random()) } ?? store()
        let verifierB = try verifierB ?? verifier ?? StaticTokenVerifier(token: tokenAtB ?? token, scopes: scopes)
        let runnerB = NodeStepRunner(identity: identityB, store: storeB, peer: nil, replayWindow: try ReplayWindow(),
                                     tokenVerifier: verifierB)
        var configB = NodeServerConfiguration(nodeKey: identityB.nodeKey, verifier: NoTokenVerifier(),
                                              stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runnerB)),
                                              logger: .silent)
        configB.trio = (identityB.certificate, identityB.clusterKey)
        configB.postHandler = NodePostHandler(runner: runnerB)
        configB.peerListener = PeerListener()
        let serverB = NodeServer(configuration: configB)
        _ = try serverB.start()
        let runnerA = NodeStepRunner(identity: identityA, store: storeA,
                                     peer: WebSocketPeerConnector(baseURL: "ws://127.0.0.1:\(serverB.peerPort ?? 0)"),
                                     replayWindow: try ReplayWindow())
        var configA = NodeServerConfiguration(nodeKey: identityA.nodeKey, verifier: try verifier ?? StaticTokenVerifier(token: token, scopes: scopes),
                                              stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runnerA)),
                                              logger: .silent)
        configA.trio = (identityA.certificate, identityA.clusterKey)
        configA.postHandler = NodePostHandler(runner: runnerA)
        let serverA = NodeServer(configuration: configA)
        _ = try serverA.start()
        return Cluster(clusterKey: clusterKey, serverA: serverA, serverB: serverB, storeA: storeA, storeB: storeB)
    }

    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
        switch keyshare.algorithm {
        case .ecdsa:
            let key = try Secp256k1.Point(compressed: [UInt8](keyshare.publicKey))
            guard let r = signature.r, let s = signature.s, let v = signature.recoveryId else { return false }
            let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
            let recovered = try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](message))
            return Secp256k1.ECDSA.verify(raw, hash: [UInt8](message), publicKey: key) && recovered == key
        case .eddsa:
            let key = try Ed25519.VerifyingKey(bytes: [UInt8](keyshare.publicKey))
            return key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message))
        }
    }

    static func message(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data {
        algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
    }

    static func session(_ algorithm: Keyshare.Algorithm, cluster: Cluster, token: String?, cloudKey: String? = nil,
                        storage: any StorageClient = InMemoryStorageClient()) -> TrioSession {
        let config = WebsocketConfig(url: cluster.url, authenticationToken: token)
        let key = cloudKey ?? cluster.cloudVerifyingKey
        switch algorithm {
        case .ecdsa:
            return SilentShard.ECDSA.trioInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: key,
                                                   websocketConfig: config, storageClient: storage)
        case .eddsa:
            return SilentShard.EdDSA.trioInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: key,
                                                   websocketConfig: config, storageClient: storage)
        }
    }

    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func keygenSignBothSignersRefreshSign(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try Self.startCluster(token: "app-token")
        defer { Task { await cluster.stop() } }
        let session = Self.session(algorithm, cluster: cluster, token: "app-token")
        let keyshare = try await session.keygen()
        #expect(keyshare.mode == .trio && keyshare.partyCount == 3 && keyshare.threshold == 2)
        #expect(try cluster.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        #expect(try cluster.storeB.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))

        for signer in [TrioSigner.nodeA, .nodeB] {
            let message = Self.message(algorithm, "over sockets with \(signer)")
            let signature = try await session.signature(keyshare: keyshare, message: message, signer: signer)
            #expect(try Self.verifies(signature, message: message, keyshare: keyshare))
        }
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey && refreshed.generation != keyshare.generation)
        #expect(try cluster.storeB.share(keyId: keyshare.keyId)?.gen == [UInt8](refreshed.generation))
        let message = Self.message(algorithm, "after refresh")
        let signature = try await session.signature(keyshare: refreshed, message: message)
        #expect(try Self.verifies(signature, message: message, keyshare: refreshed))
        if algorithm == .ecdsa {
            let child = try await session.hardDerivation(keyshare: refreshed, path: "m/0'/5")
            let childMessage = Self.message(algorithm, "hard child over sockets")
            let childSignature = try await session.signature(keyshare: child, message: childMessage, signer: .nodeB)
            #expect(try Self.verifies(childSignature, message: childMessage, keyshare: child))
        }
        await cluster.stop()
    }

    /// Import over sockets, then a reconcile at launch (DONE path) and a signature with B.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func importReconcileSign(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try Self.startCluster(token: "t")
        let session = Self.session(algorithm, cluster: cluster, token: "t")
        let keyshare = try await session.import(privateKey: Data(SecureRandom.bytes(count: 32)),
                                                rootChainCode: Data(SecureRandom.bytes(count: 32)))
        let settled = try await session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(settled == keyshare)
        let message = Self.message(algorithm, "imported, over sockets")
        let signature = try await session.signature(keyshare: keyshare, message: message, signer: .nodeB)
        #expect(try Self.verifies(signature, message: message, keyshare: keyshare))
        await cluster.stop()
    }

    /// `GET /v3/verifying-key` on a trio node: the cluster key, the node key, role, group and
    /// certificate (session.md §2.2) — for operators and tests, never trust on first use.
    @Test func verifyingKeyEndpoint() async throws {
        let cluster = try Self.startCluster(token: "t")
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

    /// The wrong app token: A refuses the connection; nothing runs.
    @Test func wrongTokenIsRefusedByA() async throws {
        let cluster = try Self.startCluster(token: "app-token")
        await #expect(throws: SilentShardError.self) {
            _ = try await Self.session(.ecdsa, cluster: cluster, token: "wrong").keygen()
        }
        await cluster.stop()
    }

    /// session.md §6.1 rule 3: A's acceptance is never evidence for B. A accepts the app's token, forwards it in
    /// LINK_OPEN, and B — with another policy — refuses it (AUTH_INVALID, relayed by A to the app).
    @Test func nodeBChecksTheForwardedTokenItself() async throws {
        let cluster = try Self.startCluster(token: "app-token", tokenAtB: "another-token")
        let session = Self.session(.ecdsa, cluster: cluster, token: "app-token")
        do {
            _ = try await session.keygen()
            Issue.record("keygen succeeded although B refuses the token")
        } catch {
            #expect(error == .authenticationFailed(reason: "invalid token"))
        }
        await cluster.stop()
    }

    /// A `cloudVerifyingKey` other than the cluster key: typed error, nothing stored.
    @Test func wrongClusterKey() async throws {
        let cluster = try Self.startCluster(token: "t")
        let storage = InMemoryStorageClient()
        let session = Self.session(.eddsa, cluster: cluster, token: "t",
                                   cloudKey: Hex.encode(Ed25519.SigningKey().verifyingKey.bytes), storage: storage)
        do {
            _ = try await session.keygen()
            Issue.record("keygen succeeded under a foreign cluster key")
        } catch {
            switch error {
            case .cloudVerificationFailed, .rejected: break
            default: Issue.record("unexpected \(error)")
            }
        }
        await cluster.stop()
    }

    /// Node B down: A answers PEER_UNAVAILABLE (typed error at the app), nothing is promoted; A alone
    /// still co-signs (S = {0, 1}).
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func nodeBDown(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try Self.startCluster(token: "t")
        let storage = InMemoryStorageClient()
        let session = Self.session(algorithm, cluster: cluster, token: "t", storage: storage)
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
        let message = Self.message(algorithm, "A alone")
        let signature = try await session.signature(keyshare: keyshare, message: message)
        #expect(try Self.verifies(signature, message: message, keyshare: keyshare))
        await cluster.serverA.stop()
    }
}
