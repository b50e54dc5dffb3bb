import Foundation
import MPCCrypto
import SilentShardCore

/// Trio nodes A and B as two `silentshard node` processes (`--role trio-a|trio-b`), each with its own key,
/// database and master key, certified by a fresh cluster key; A relays to B over `/v3/peer` on B's peer listener.
final class TrioNodePair: @unchecked Sendable {
    let nodeA: NodeProcess
    let nodeB: NodeProcess
    /// The apps' `cloudVerifyingKey`: the cluster key.
    let clusterKey: String
    /// `--tls`: node A serves the apps over wss with this certificate (the A–B link stays ws on loopback).
    let tls: BenchTLS?
    /// The bench app's token; both nodes' token files grant it every trio scope (export and recover
    /// need theirs explicitly, session.md §9.3).
    static let token = "silentshard-bench-trio-token"
    static let scopes = "keygen reconcile refresh sign preSign preSignFinal recover export import hardDerivation"

    init(tls: BenchTLS? = nil) throws {
        self.tls = tls
        let cluster = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
        clusterKey = Hex.encode(cluster.verifyingKey.bytes)
        func start(_ role: NodeCertificate.Role, name: String, extra: [String]) throws -> NodeProcess {
            let directory = NSTemporaryDirectory() + "silentshard-bench-\(name)-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let key = Ed25519.SigningKey(), now = UInt64(Date().timeIntervalSince1970)
            let certificate = NodeCertificate(role: role, groupID: group, nodeKey: key.verifyingKey, notBefore: now - 60,
                                              notAfter: now + 86_400, serial: 1, issuer: cluster)
            func write(_ file: String, _ text: String) throws {
                guard FileManager.default.createFile(atPath: directory + "/" + file, contents: Data((text + "\n").utf8),
                                                     attributes: [.posixPermissions: 0o600])
                else { throw BenchError("cannot write \(file)") }
            }
            try write("node.key", Hex.encode(key.seed))
            try write("master.key", Hex.encode(SecureRandom.bytes(count: 32)))
            try write("node.cert", Hex.encode(certificate.encoded))
            try write("tokens", TrioNodePair.token + "\nscope: " + TrioNodePair.scopes)
            return try NodeProcess(directory: directory, arguments: [
                "--auth", "token-file:" + directory + "/tokens", "--node-key", directory + "/node.key", "--database", directory + "/node.sqlite",
                "--master-key", directory + "/master.key", "--role", role == .trioA ? "trio-a" : "trio-b",
                "--cluster-key", Hex.encode(cluster.verifyingKey.bytes), "--certificate", directory + "/node.cert",
            ] + extra)
        }
        nodeB = try start(.trioB, name: "b", extra: ["--peer-listen", "127.0.0.1:0"])
        do {
            guard let peerPort = nodeB.peerPort else { throw BenchError("node B did not report its peer listener") }
            nodeA = try start(.trioA, name: "a", extra: ["--peer", "ws://127.0.0.1:\(peerPort)"] + (tls?.nodeArguments ?? []))
        } catch {
            nodeB.stop()
            throw error
        }
    }

    func stop() {
        nodeA.stop()
        nodeB.stop()
    }
}
