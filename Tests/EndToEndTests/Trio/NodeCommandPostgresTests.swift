@testable import CloudNode
import ChildProcesses
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// `silentshard node --database postgres://…` as separate processes: trio-a and trio-b each on their
/// own PostgreSQL schema, duo with a password in the URL (never printed), `--rotate-master-key` on
/// PostgreSQL. Needs `SILENTSHARD_TEST_POSTGRES_URL` (scripts/test starts a server).
@Suite("Node command line on PostgreSQL", .serialized, .heavy, .timeLimit(.minutes(30)))
struct NodeCommandPostgresTests {
    /// A fresh schema on the test server, selected through the URL's `search_path`; `password` is
    /// added to the URL's user info (the test server trusts loopback and ignores it).
    static func scratchDatabase(password: String? = nil) throws -> String {
        let value = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_POSTGRES_URL"] ?? ""
        guard !value.isEmpty else {
            try Test.cancel("SILENTSHARD_TEST_POSTGRES_URL is unset: PostgreSQL command-line cases skipped (scripts/test starts a server)")
        }
        let schema = "cli_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgresConnection(conninfo: value).execute("CREATE SCHEMA \(schema)")
        var url = value + (value.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        if let password, let at = url.range(of: "@") { url.replaceSubrange(at, with: ":\(password)@") }
        return url
    }

    @Test func trioNodeProcessesOnPostgres() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: TrioCommandLineTests.binary.path), "build the silentshard product first")
        let databases = ["a": try Self.scratchDatabase(), "b": try Self.scratchDatabase()]
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trio-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func write(_ name: String, _ text: String) throws { try (text + "\n").write(toFile: path(name), atomically: true, encoding: .utf8) }

        let generated = try await TrioCommandLineTests.run(["node-cert", "--generate-cluster-key", path("cluster.key")])
        let clusterKey = generated.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let group = Hex.encode(SecureRandom.bytes(count: 16))
        for node in ["a", "b"] {
            try write("\(node).key", Hex.encode(Ed25519.SigningKey().seed))
            try write("\(node).master", Hex.encode(SecureRandom.bytes(count: 32)))
            let issued = try await TrioCommandLineTests.run(["node-cert", "--cluster-key-file", path("cluster.key"),
                                                             "--node-key", path("\(node).key"), "--role", "trio-\(node)",
                                                             "--group", group])
            try write("\(node).cert", issued.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        func nodeArguments(_ node: String) -> [String] {
            ["--node-key", path("\(node).key"), "--database", databases[node] ?? "", "--master-key", path("\(node).master"),
             "--role", "trio-\(node)", "--cluster-key", clusterKey, "--certificate", path("\(node).cert")]
        }
        let (processB, _, peerPortB) = try await TrioCommandLineTests.startNode(nodeArguments("b") + ["--peer-listen", "127.0.0.1:0"])
        defer { processB.terminate(grace: 5) }
        let peerPort = try #require(peerPortB)
        let (processA, portA, _) = try await TrioCommandLineTests.startNode(nodeArguments("a") + ["--peer", "ws://127.0.0.1:\(peerPort)"])
        defer { processA.terminate(grace: 5) }

        let session = SilentShard.ECDSA.trioInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: clusterKey,
                                                      websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(portA)"),
                                                      storageClient: InMemoryStorageClient())
        let keyshare = try await session.keygen()
        let message = Data(SHA256.hash(Array("trio on postgres".utf8)))
        for signer in [TrioSigner.nodeA, .nodeB] {
            let signature = try await session.signature(keyshare: keyshare, message: message, signer: signer)
            #expect(signature.isValid(for: message, publicKey: keyshare.publicKey))
        }
        // Each node's share is in its own database.
        let masterA = try NodeMasterKey(bytes: Hex.decode(String(contentsOfFile: path("a.master"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try NodeShareStore(location: .postgres(url: databases["a"] ?? ""), masterKey: masterA).keyCount() == 1)
        processA.terminate(grace: 5)
        processB.terminate(grace: 5)
    }

    @Test func duoNodeOnPostgresHidesThePasswordAndRotatesItsMasterKey() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: TrioCommandLineTests.binary.path), "build the silentshard product first")
        let password = "pw-\(UUID().uuidString.prefix(8))"
        let database = try Self.scratchDatabase(password: password)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("duo-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let nodeKey = directory.appendingPathComponent("node.key").path
        let oldKey = directory.appendingPathComponent("old.master").path
        let newKey = directory.appendingPathComponent("new.master").path
        let arguments = ["node", "--listen", "127.0.0.1:0", "--auth", "none", "--node-key", nodeKey, "--database", database]

        // First start creates the keys and the schema; its output names the store without the password.
        let output = Pipe()
        let process = try ChildProcess.run(TrioCommandLineTests.binary, arguments: arguments + ["--master-key", oldKey, "--generate-key"],
                                           standardOutput: .pipe(output), standardError: .pipe(output))
        let text = try await offPool { () -> String in
            var text = ""
            while !text.contains("node store:") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        process.terminate()
        _ = try await offPool { process.waitForExit(timeout: 30) }
        #expect(text.contains("node store: postgresql://postgres:***@127.0.0.1"), "\(text)")
        #expect(!text.contains(password))

        // A share under the old key, then rotation through the command line.
        let master = try NodeMasterKey(bytes: Hex.decode(String(contentsOfFile: oldKey, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        let store = try NodeShareStore(location: .postgres(url: database), masterKey: master)
        let keyId = String(repeating: "ab", count: 32)
        let share = NodeKeyshare(gen: [UInt8](repeating: 1, count: 32), kind: .ecdsa, bytes: SecureRandom.bytes(count: 64))
        try store.commitDirectly(keyId: keyId, share: share, replacing: nil, party: "test", owner: "test-owner")
        let rotated = try await TrioCommandLineTests.run(["node", "--database", database, "--master-key", oldKey,
                                                          "--rotate-master-key", newKey])
        #expect(rotated.status == 0)
        #expect(rotated.output.contains("re-sealed 1 keyshares and 0 presignatures"), "\(rotated.output)")
        #expect(!rotated.output.contains(password))
        let newMaster = try NodeMasterKey(bytes: Hex.decode(String(contentsOfFile: newKey, encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(try NodeShareStore(location: .postgres(url: database), masterKey: newMaster).share(keyId: keyId) == share)
        #expect(throws: NodeStoreError.wrongMasterKey) { try NodeShareStore(location: .postgres(url: database), masterKey: master) }
    }
}
