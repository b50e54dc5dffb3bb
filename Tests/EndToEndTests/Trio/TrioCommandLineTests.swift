import ChildProcesses
import Foundation
import SilentShardTestSupport
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Runs blocking work on its own thread (process pipes, waits), never on the cooperative pool.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// `silentshard node-cert` and `silentshard node --role trio-a|trio-b` as separate processes, driven
/// by the SDK over loopback WebSockets.
@Suite("Trio command line: node-cert, node --role trio-a/trio-b", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioCommandLineTests {
    /// The package root: this file is `Tests/EndToEndTests/Trio/TrioCommandLineTests.swift`.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let binary = root.appendingPathComponent(".build/debug/silentshard")

    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let output = Pipe()
        let process = try ChildProcess.run(binary, arguments: arguments, standardOutput: .pipe(output), standardError: .null)
        return try await offPool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitForExit(timeout: 120)
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }

    /// Starts a node process and returns it with its port and, for node B, its peer listener's port
    /// (from its first stdout lines).
    static func startNode(_ arguments: [String]) async throws -> (ChildProcess, Int, Int?) {
        let output = Pipe()
        let process = try ChildProcess.run(binary, arguments: ["node", "--listen", "127.0.0.1:0", "--auth", "none"] + arguments,
                                           standardOutput: .pipe(output), standardError: .null)
        let reader = output.fileHandleForReading
        let text = try await offPool { () -> String in
            var text = ""
            while !text.contains("verifying key") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        guard let port = text.split(separator: "\n").first(where: { $0.hasPrefix("silentshard node listening on port ") })
            .flatMap({ Int($0.split(separator: " ").last ?? "") })
        else {
            process.terminate(grace: 5)
            throw NodeStartFailure()
        }
        let peerPort = text.split(separator: "\n").first(where: { $0.hasPrefix("silentshard node peer link listening on port ") })
            .flatMap { Int($0.split(separator: " ").last ?? "") }
        return (process, port, peerPort)
    }

    struct NodeStartFailure: Error {}

    @Test func twoNodeProcessesServeTrio() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "build the silentshard product first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trio-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func write(_ name: String, _ text: String) throws { try (text + "\n").write(toFile: path(name), atomically: true, encoding: .utf8) }

        // Operator, offline: the cluster key and one certificate per node.
        let generated = try await Self.run(["node-cert", "--generate-cluster-key", path("cluster.key")])
        #expect(generated.status == 0)
        let clusterKey = generated.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(clusterKey.count == 64)
        let group = Hex.encode(SecureRandom.bytes(count: 16))
        for node in ["a", "b"] {
            try write("\(node).key", Hex.encode(Ed25519.SigningKey().seed))
            try write("\(node).master", Hex.encode(SecureRandom.bytes(count: 32)))
            let issued = try await Self.run(["node-cert", "--cluster-key-file", path("cluster.key"), "--node-key", path("\(node).key"),
                                             "--role", "trio-\(node)", "--group", group])
            #expect(issued.status == 0)
            try write("\(node).cert", issued.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        func nodeArguments(_ node: String) -> [String] {
            ["--node-key", path("\(node).key"), "--database", path("\(node).sqlite"), "--master-key", path("\(node).master"),
             "--role", "trio-\(node)", "--cluster-key", clusterKey, "--certificate", path("\(node).cert")]
        }
        let (processB, portB, peerPortB) = try await Self.startNode(nodeArguments("b") + ["--peer-listen", "127.0.0.1:0"])
        defer { processB.terminate(grace: 5) }
        let peerPort = try #require(peerPortB)
        let (processA, portA, _) = try await Self.startNode(nodeArguments("a") + ["--peer", "ws://127.0.0.1:\(peerPort)"])
        defer { processA.terminate(grace: 5) }

        let session = SilentShard.EdDSA.trioInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: clusterKey,
                                                      websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(portA)"),
                                                      storageClient: InMemoryStorageClient())
        let keyshare = try await session.keygen()
        #expect(keyshare.groupId.map { Hex.encode([UInt8]($0)) } == group)
        let message = Data("two processes".utf8)
        for signer in [TrioSigner.nodeA, .nodeB] {
            let signature = try await session.signature(keyshare: keyshare, message: message, signer: signer)
            let key = try Ed25519.VerifyingKey(bytes: [UInt8](keyshare.publicKey))
            #expect(key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message)))
        }
        // A misconfigured role is refused at startup (exit status 2).
        let wrong = try await Self.run(["node", "--listen", "127.0.0.1:0", "--auth", "none"] + nodeArguments("a")
            .map { $0 == "trio-a" ? "trio-b" : $0 })
        #expect(wrong.status == 2)
        // Security review finding 13: an unencrypted link to a non-loopback B needs --allow-insecure-peer.
        let insecure = try await InsecureSettingsTests.run(["node", "--listen", "127.0.0.1:0", "--auth", "none"]
                                                            + nodeArguments("a") + ["--peer", "ws://10.255.255.1:9"])
        #expect(insecure.status == 2 && insecure.errors.contains("--allow-insecure-peer"), "\(insecure.errors)")
        // Security review finding 5: B serves A's links on --peer-listen only: it is required, it is
        // not for other roles, an unencrypted non-loopback one needs --allow-insecure-peer, and B's
        // apps' port has no /v3/peer (nor does A's).
        let withoutPeerListener = try await InsecureSettingsTests.run(["node", "--listen", "127.0.0.1:0", "--auth", "none"]
                                                                      + nodeArguments("b"))
        #expect(withoutPeerListener.status == 2 && withoutPeerListener.errors.contains("--peer-listen"),
                "\(withoutPeerListener.errors)")
        let peerListenOnA = try await InsecureSettingsTests.run(["node", "--listen", "127.0.0.1:0", "--auth", "none"]
                                                                + nodeArguments("a") + ["--peer", "ws://127.0.0.1:\(peerPort)",
                                                                                        "--peer-listen", "127.0.0.1:0"])
        #expect(peerListenOnA.status == 2 && peerListenOnA.errors.contains("--peer-listen"), "\(peerListenOnA.errors)")
        let openPeerListener = try await InsecureSettingsTests.run(["node", "--listen", "127.0.0.1:0", "--auth", "none"]
                                                                   + nodeArguments("b") + ["--peer-listen", "0.0.0.0:0"])
        #expect(openPeerListener.status == 2 && openPeerListener.errors.contains("--allow-insecure-peer"),
                "\(openPeerListener.errors)")
        for port in [portA, portB] {
            let head = try await offPool { () -> String in
                guard let (fd, head) = LoopbackSocket.upgrade(port: port, path: "/v3/peer", subprotocol: "silentshard-peer")
                else { return "" }
                close(fd)
                return head
            }
            #expect(head.hasPrefix("HTTP/1.1 404"), "\(head)")
        }
        processA.terminate(grace: 5)
        processB.terminate(grace: 5)
    }
}

/// Security review finding 13: `--auth none` only on loopback, and an unencrypted link to B only on
/// loopback, unless the operator says otherwise explicitly; the refusal says why (exit status 2).
@Suite("Finding 13: insecure node settings need an explicit flag", .timeLimit(.minutes(30)))
struct InsecureSettingsTests {
    static func run(_ arguments: [String]) async throws -> (status: Int32, errors: String) {
        let errors = Pipe()
        let process = try ChildProcess.run(TrioCommandLineTests.binary, arguments: arguments, standardOutput: .null,
                                           standardError: .pipe(errors))
        return try await offPool {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitForExit(timeout: 120)
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
    }

    @Test func authNoneListensOnLoopbackOnly() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: TrioCommandLineTests.binary.path), "build the silentshard product first")
        let key = FileManager.default.temporaryDirectory.appendingPathComponent("insecure-\(UUID().uuidString).key").path
        defer { try? FileManager.default.removeItem(atPath: key) }
        let refused = try await Self.run(["node", "--listen", "0.0.0.0:0", "--auth", "none", "--node-key", key, "--generate-key"])
        #expect(refused.status == 2)
        #expect(refused.errors.contains("--allow-insecure-auth-none"), "\(refused.errors)")
        // With the flag it starts (and is stopped at once).
        let output = Pipe()
        let process = try ChildProcess.run(TrioCommandLineTests.binary,
                                           arguments: ["node", "--listen", "0.0.0.0:0", "--auth", "none", "--node-key", key,
                                                       "--allow-insecure-auth-none"],
                                           standardOutput: .pipe(output), standardError: .null)
        let reader = output.fileHandleForReading
        let started = try await offPool { () -> String in
            var text = ""
            while !text.contains("listening on port") {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
        #expect(started.contains("listening on port"), "\(started)")
        process.terminate(grace: 5)
    }
}
