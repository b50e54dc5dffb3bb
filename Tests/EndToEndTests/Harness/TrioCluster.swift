import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import trio

/// Trio's nodes over real sockets: node B, then node A linked to B (WebSocket to B's `/v3/peer`,
/// subprotocol `silentshard-peer`), each with its own key, certificate and database (the trio half of the
/// end-to-end harness; `EndToEndFixture` is the mode-neutral face).
struct TrioCluster {
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
    static func start(token: String, tokenAtB: String? = nil, scopes: Set<String>? = nil,
                      verifier: (any TokenVerifier)? = nil, verifierB: (any TokenVerifier)? = nil,
                      databases: (a: NodeStoreLocation, b: NodeStoreLocation)? = nil,
                      masterKey: NodeMasterKey? = nil) throws -> TrioCluster {
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
        return TrioCluster(clusterKey: clusterKey, serverA: serverA, serverB: serverB, storeA: storeA, storeB: storeB)
    }

    /// A trio app session of `algorithm` on `cluster`'s A (the `websocketConfig` overload).
    static func session(_ algorithm: Keyshare.Algorithm, cluster: TrioCluster, token: String?, cloudKey: String? = nil,
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
}
