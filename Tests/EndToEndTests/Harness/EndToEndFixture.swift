import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import duo
import trio

/// The end-to-end harness of every mode: real node servers on loopback sockets — duo: one node
/// (`DuoNode`); trio: nodes A and B, A linked to B (`TrioCluster`). Suites that assert one behaviour in
/// both modes take a `Keyshare.Mode` argument and make one of these; the mode-only suites (`Duo/`,
/// `Trio/`) use the mode's deployment directly.
struct EndToEndFixture {
    enum Deployment {
        case duo(DuoNode)
        case trio(TrioCluster)
    }

    let deployment: Deployment
    /// The app's bearer token (nil: none).
    let token: String?
    /// Duo export: the operator backend's bearer token for the export POST (unused in trio, where the app
    /// exports over its own WebSocket with the `export` scope).
    let backendToken: String?

    /// - Parameters:
    ///   - token: the app's token; the node(s) accept it with `scopes` (nil: the default scopes), unless
    ///     `verifier` is given. Without a token and a verifier, duo's node checks no token (trio's A always
    ///     checks one: pass a token).
    ///   - verifier: every node's token verifier (duo: the node; trio: A and B).
    ///   - backendToken: duo's export POST credential (see `export(_:keyshare:chainPath:)`).
    init(mode: Keyshare.Mode, token: String?, scopes: Set<String>? = nil, verifier: (any TokenVerifier)? = nil,
         backendToken: String? = nil) throws {
        self.token = token
        self.backendToken = backendToken
        switch mode {
        case .duo:
            let nodeVerifier: any TokenVerifier = try verifier ?? token.map { try StaticTokenVerifier(token: $0, scopes: scopes) }
                ?? NoTokenVerifier()
            deployment = .duo(try DuoNode.start(verifier: nodeVerifier))
        case .trio:
            deployment = .trio(try TrioCluster.start(token: token ?? "", scopes: scopes, verifier: verifier))
        }
    }

    var mode: Keyshare.Mode {
        switch deployment {
        case .duo: .duo
        case .trio: .trio
        }
    }

    /// How many parties hold a share: duo 2, trio 3.
    var partyCount: Int { mode == .duo ? 2 : 3 }

    /// The app's WebSocket base URL: duo's node, trio's A.
    var url: String {
        switch deployment {
        case .duo(let node): node.url
        case .trio(let cluster): cluster.url
        }
    }

    /// The key the app pins: duo's node key, trio's cluster key.
    var cloudVerifyingKey: String {
        switch deployment {
        case .duo(let node): node.cloudVerifyingKey
        case .trio(let cluster): cluster.cloudVerifyingKey
        }
    }

    /// Every node's store: duo [node], trio [A, B].
    var stores: [NodeShareStore] {
        switch deployment {
        case .duo(let node): [node.store]
        case .trio(let cluster): [cluster.storeA, cluster.storeB]
        }
    }

    /// The signer choices of the mode: duo's one node (nil), trio's A and B.
    var signers: [TrioSigner?] { mode == .duo ? [nil] : [.nodeA, .nodeB] }

    /// The store of the node that co-signs with `signer` (duo: the node).
    func store(_ signer: TrioSigner?) -> NodeShareStore {
        switch deployment {
        case .duo(let node): node.store
        case .trio(let cluster): signer == .nodeB ? cluster.storeB : cluster.storeA
        }
    }

    /// An app session of `algorithm` (the `websocketConfig` overload) with a fresh device key, or
    /// `networkClient` with the stock action provider; `token` and `cloudKey` default to the fixture's.
    func session(_ algorithm: Keyshare.Algorithm, token: String?? = nil, cloudKey: String? = nil,
                 storage: any StorageClient = InMemoryStorageClient(),
                 networkClient: (any NetworkClient)? = nil) -> AppOverSockets {
        let config = WebsocketConfig(url: url, authenticationToken: token ?? self.token)
        let key = cloudKey ?? cloudVerifyingKey, signer = SoftwareEd25519MessageSigner()
        switch (mode, algorithm, networkClient) {
        case (.duo, .ecdsa, nil):
            return .duo(SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: key, websocketConfig: config,
                                                       storageClient: storage))
        case (.duo, .eddsa, nil):
            return .duo(SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: key, websocketConfig: config,
                                                       storageClient: storage))
        case (.duo, .ecdsa, let client?):
            return .duo(SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: key, storageClient: storage,
                                                       networkClient: client, actionProvider: .ecdsa))
        case (.duo, .eddsa, let client?):
            return .duo(SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: key, storageClient: storage,
                                                       networkClient: client, actionProvider: .eddsa))
        case (.trio, .ecdsa, nil):
            return .trio(SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: key, websocketConfig: config,
                                                         storageClient: storage))
        case (.trio, .eddsa, nil):
            return .trio(SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: key, websocketConfig: config,
                                                         storageClient: storage))
        case (.trio, .ecdsa, let client?):
            return .trio(SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: key, storageClient: storage,
                                                         networkClient: client, actionProvider: .ecdsa))
        case (.trio, .eddsa, let client?):
            return .trio(SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: key, storageClient: storage,
                                                         networkClient: client, actionProvider: .eddsa))
        }
    }

    /// The stock network client of the mode for this fixture's URL and token.
    func stockNetworkClient() -> any NetworkClient {
        let config = WebsocketConfig(url: url, authenticationToken: token)
        switch mode {
        case .duo: return DuoNetworkClient(websocketConfig: config)
        case .trio: return TrioNetworkClient(websocketConfig: config)
        }
    }

    /// Exports `keyshare` the mode's way: duo — the app builds the request, the backend POSTs it to the
    /// node with `backendToken`, the app combines the answer; trio — the app's own WebSocket step (A and B
    /// each encrypt their share to the app).
    func export(_ session: AppOverSockets, keyshare: Keyshare, chainPath: String = "m") async throws -> ExportedKey {
        switch (session, deployment) {
        case (.duo(let duo), .duo(let node)):
            return try await duo.export(keyshare: keyshare, chainPath: chainPath) { request in
                try await node.post(request.body, path: request.path, params: request.params, token: backendToken)
            }
        case (.trio(let trio), .trio):
            precondition(chainPath == "m", "trio exports the root only (design.md §13)")
            return try await trio.export(keyshare: keyshare)
        default:
            preconditionFailure("a \(session.mode) session on a \(mode) deployment")
        }
    }

    func stop() async {
        switch deployment {
        case .duo(let node): await node.server.stop()
        case .trio(let cluster): await cluster.stop()
        }
    }
}

/// An app session of either mode over sockets, with the operations both modes have. `signer` picks trio's
/// co-signer without fallback (nil: trio's default, A with the fallback to B); duo has one node and takes nil.
enum AppOverSockets: Sendable {
    case duo(DuoSession)
    case trio(TrioSession)

    var mode: Keyshare.Mode {
        switch self {
        case .duo: .duo
        case .trio: .trio
        }
    }

    func keygen() async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.keygen()
        case .trio(let session): try await session.keygen()
        }
    }

    func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.keyRefresh(keyshare: keyshare)
        case .trio(let session): try await session.keyRefresh(keyshare: keyshare)
        }
    }

    func `import`(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.import(privateKey: privateKey, rootChainCode: rootChainCode)
        case .trio(let session): try await session.import(privateKey: privateKey, rootChainCode: rootChainCode)
        }
    }

    func reconcileKeyshare(keyId: String) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.reconcileKeyshare(keyId: keyId)
        case .trio(let session): try await session.reconcileKeyshare(keyId: keyId)
        }
    }

    func signature(keyshare: Keyshare, message: Data, chainPath: String = "m",
                   signer: TrioSigner? = nil) async throws(SilentShardError) -> Signature {
        switch self {
        case .duo(let session):
            precondition(signer == nil, "duo has one node")
            return try await session.signature(keyshare: keyshare, message: message, chainPath: chainPath)
        case .trio(let session):
            guard let signer else { return try await session.signature(keyshare: keyshare, message: message, chainPath: chainPath) }
            return try await session.signature(keyshare: keyshare, message: message, chainPath: chainPath, signer: signer)
        }
    }

    func preSignature(keyshare: Keyshare, chainPath: String = "m", signer: TrioSigner? = nil) async throws(SilentShardError) -> PreSignature {
        switch self {
        case .duo(let session):
            precondition(signer == nil, "duo has one node")
            return try await session.preSignature(keyshare: keyshare, chainPath: chainPath)
        case .trio(let session):
            return try await session.preSignature(keyshare: keyshare, chainPath: chainPath, signer: signer ?? .nodeA)
        }
    }

    func preSignatureFinal(preSignature: PreSignature, message: Data) async throws(SilentShardError) -> Signature {
        switch self {
        case .duo(let session): try await session.preSignatureFinal(preSignature: preSignature, message: message)
        case .trio(let session): try await session.preSignatureFinal(preSignature: preSignature, message: message)
        }
    }

    func reconcilePreSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        switch self {
        case .duo(let session): try await session.reconcilePreSignatures(keyshare: keyshare)
        case .trio(let session): try await session.reconcilePreSignatures(keyshare: keyshare)
        }
    }
}
