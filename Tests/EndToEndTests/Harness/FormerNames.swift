import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import trio

// The harness's former names (the statics of DuoOverWebSocketTests and TrioOverWebSocketTests in
// Tests/DuoEndToEndTests and Tests/TrioEndToEndTests before issue 34 item 5), so that a suite written
// against them (e.g. on another branch of the same session) compiles unchanged once moved into this target.
// They are namespaces, not suites; new suites use `DuoNode`, `TrioCluster`, `EndToEndFixture(mode:)` and
// `EndToEnd`.

/// Duo's node as `DuoOverWebSocketTests` made it (`DuoNode`).
enum DuoOverWebSocketTests {
    typealias Node = DuoNode

    static func startNode(key: Ed25519.SigningKey = Ed25519.SigningKey(), databasePath: String? = nil,
                          masterKey: NodeMasterKey = .random(), verifier: any TokenVerifier = NoTokenVerifier()) throws -> DuoNode {
        try DuoNode.start(key: key, databasePath: databasePath, masterKey: masterKey, verifier: verifier)
    }

    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
        try EndToEnd.verifies(signature, message: message, keyshare: keyshare)
    }
}

/// Trio's cluster as `TrioOverWebSocketTests` made it (`TrioCluster`).
enum TrioOverWebSocketTests {
    typealias Cluster = TrioCluster

    static func startCluster(token: String, tokenAtB: String? = nil, scopes: Set<String>? = nil,
                             verifier: (any TokenVerifier)? = nil, verifierB: (any TokenVerifier)? = nil,
                             databases: (a: NodeStoreLocation, b: NodeStoreLocation)? = nil,
                             masterKey: NodeMasterKey? = nil) throws -> TrioCluster {
        try TrioCluster.start(token: token, tokenAtB: tokenAtB, scopes: scopes, verifier: verifier, verifierB: verifierB,
                              databases: databases, masterKey: masterKey)
    }

    static func session(_ algorithm: Keyshare.Algorithm, cluster: TrioCluster, token: String?, cloudKey: String? = nil,
                        storage: any StorageClient = InMemoryStorageClient()) -> TrioSession {
        TrioCluster.session(algorithm, cluster: cluster, token: token, cloudKey: cloudKey, storage: storage)
    }

    static func store() throws -> NodeShareStore { try TrioCluster.store() }

    static func identity(_ role: NodeCertificate.Role, group: [UInt8], clusterKey: Ed25519.SigningKey) throws -> TrioNodeIdentity {
        try TrioCluster.identity(role, group: group, clusterKey: clusterKey)
    }

    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
        try EndToEnd.verifies(signature, message: message, keyshare: keyshare)
    }

    static func message(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data { EndToEnd.message(algorithm, text) }
}
