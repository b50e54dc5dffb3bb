import ChildProcesses
import CloudNode
import duo
import Foundation
import SilentShardCore
import SilentShardTestSupport
import Testing
import trio

@Suite(.serialized, .timeLimit(.minutes(30))) struct RobustnessTests {
    /// Python `websockets` and raw sockets misbehaving: each gets a clean rejection; the node keeps serving.
    @Test func misbehavingPythonClients() async throws {
        let limit = 1 << 20
        let node = try TestNode.start(maximumMessageSize: limit)
        let root = PythonPeer.repositoryRoot
        let output = Pipe()
        let process = try ChildProcess.run(root.appendingPathComponent(".venv/bin/python"),
                                           arguments: [root.appendingPathComponent("interop/node_raw_client.py").path, "\(node.port)", "\(limit)"],
                                           standardOutput: .pipe(output))
        let reader = output.fileHandleForReading
        let (data, status) = try await offPool { () -> (Data, Int32) in
            let data = reader.readDataToEndOfFile()
            _ = process.waitForExit()
            return (data, process.terminationStatus)
        }
        #expect(status == 0)
        let results = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
        #expect(["dropped", "status 400", "status 403"].contains(results["garbage_bytes"]), "\(results)")
        #expect(["dropped", "status 400", "status 403", "status 404", "status 405", "status 501"].contains(results["bad_http"]), "\(results)")
        #expect(results["wrong_subprotocol"] == "status 400")
        #expect(results["foreign_subprotocol"] == "status 400")
        #expect(results["no_subprotocol"] == "status 400")
        #expect(results["unknown_route"] == "status 404")
        #expect(results["oversized"] == "closed 1009")
        #expect(["closed 1002", "dropped", "upgraded"].contains(results["bad_frame"]), "\(results)")
        #expect(results["truncated"] == "sent")
        #expect(results["good_after"] == "echo ok")
        // And our own client still works.
        let client = TrioNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([42]))
        #expect(try await client.read() == Data([42]))
        try await client.disconnect()
        await node.server.stop()
    }

    /// 200 connect/echo/disconnect cycles: file descriptors and threads return to where they started.
    @Test func twoHundredCyclesLeaveNoResidue() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig(token: "t"))
        // Warm up (lazy allocations in the runtime, OpenSSL, the cooperative pool).
        for _ in 0..<5 { try await cycle(client) }
        try await Task.sleep(for: .milliseconds(100))
        let fdsBefore = openFileDescriptors()
        let threadsBefore = threadCount()
        let start = ContinuousClock.now
        for _ in 0..<200 { try await cycle(client) }
        let elapsed = ContinuousClock.now - start
        var fdsAfter = openFileDescriptors()
        var threadsAfter = threadCount()
        // Closing is asynchronous on both sides: give it time (no upper bound asserted on speed).
        func allClosed() -> Bool { node.server.metricsText().contains("silentshard_node_connections_open 0") }
        for _ in 0..<200 where fdsAfter > fdsBefore + 32 || threadsAfter > threadsBefore + 8 || !allClosed() {
            try await Task.sleep(for: .milliseconds(20))
            fdsAfter = openFileDescriptors()
            threadsAfter = threadCount()
        }
        // Other suites run in parallel in this process (subprocesses with pipes, their own sockets):
        // a small slack for them; a per-cycle leak over 200 cycles is far beyond it.
        #expect(fdsAfter <= fdsBefore + 32, "fds \(fdsBefore) → \(fdsAfter)")
        #expect(threadsAfter <= threadsBefore + 8, "threads \(threadsBefore) → \(threadsAfter)")
        #expect(allClosed())
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("node: 200 connect/echo/disconnect cycles in \(String(format: "%.3f", seconds)) s "
              + "(\(String(format: "%.0f", 200 / seconds)) cycles/s)")
        await node.server.stop()
    }

    /// Round trips of a small message on one connection (figures printed, not asserted).
    @Test func echoRoundTrip() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Signature(), params: nil)
        let payload = Data(count: 64)
        for _ in 0..<20 {
            try await client.send(bytes: payload)
            _ = try await client.read()
        }
        let rounds = 500
        let start = ContinuousClock.now
        for _ in 0..<rounds {
            try await client.send(bytes: payload)
            #expect(try await client.read() == payload)
        }
        let elapsed = ContinuousClock.now - start
        let micros = (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(rounds)
        print("node: 64-byte echo round trip \(String(format: "%.0f", micros)) µs (mean of \(rounds))")
        try await client.disconnect()
        await node.server.stop()
    }

    /// Stop with a step in progress: the client sees 1001, the port stops accepting, stop returns.
    @Test func gracefulStop() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1]))
        _ = try await client.read()
        let port = node.port
        await node.server.stop()
        #expect(closeCode(await thrownError { _ = try await client.read() }) == 1001)
        try await client.disconnect()
        await node.server.stop()   // idempotent
        let after = DuoNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)", connectTimeout: .seconds(5)))
        #expect(await thrownError { try await after.connect(action: DuoAction.ECDSA.Keygen(), params: nil) } != nil)
        #expect(node.log.contains("stopped"))
    }

    @Test func startErrors() async throws {
        let node = try TestNode.start()
        // The same port again: refused.
        let clash = NodeServer(configuration: NodeServerConfiguration(
            port: node.port, nodeKey: .init(), verifier: NoTokenVerifier(), logger: .silent))
        #expect(throws: NodeServerError.self) { try clash.start() }
        #expect(throws: NodeServerError.alreadyStarted) { try node.server.start() }
        let badTLS = NodeServer(configuration: NodeServerConfiguration(
            tlsCertificatePath: "/nonexistent.pem", tlsKeyPath: "/nonexistent.key", nodeKey: .init(), verifier: NoTokenVerifier(),
            logger: .silent))
        #expect(throws: NodeServerError.self) { try badTLS.start() }
        await node.server.stop()
    }

    private func cycle(_ client: DuoNetworkClient) async throws {
        try await client.connect(action: DuoAction.EdDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1, 2, 3]))
        #expect(try await client.read() == Data([1, 2, 3]))
        try await client.disconnect()
    }

    private func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    private func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }
}

/// Waits before reading, so messages pile up and the server pauses the socket.
struct SlowStartEcho: StepHandler {
    func run(_ context: StepContext) async throws {
        try await Task.sleep(for: .milliseconds(300))
        try await EchoStepHandler().run(context)
    }
}

extension RobustnessTests {
    /// A reader that falls behind pauses the socket (rx flow control) and loses nothing.
    @Test func slowReaderGetsEverythingInOrder() async throws {
        let node = try TestNode.start(stepHandler: SlowStartEcho())
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Signature(), params: nil)
        let messages = (0..<12).map { index in Data(repeating: UInt8(index), count: 64 << 10) }
        for message in messages { try await client.send(bytes: message) }
        for message in messages { #expect(try await client.read() == message) }
        try await client.disconnect()
        await node.server.stop()
    }

    /// `silentshard node`: generates a key, serves /health, stops on SIGTERM with status 0.
    @Test func commandLineNode() async throws {
        let binary = PythonPeer.repositoryRoot.appendingPathComponent(".build/debug/silentshard")
        try #require(FileManager.default.isExecutableFile(atPath: binary.path), "build the silentshard product first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("node-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tokenPath = directory.appendingPathComponent("token").path
        try "cli-token\n".write(toFile: tokenPath, atomically: true, encoding: .utf8)
        let keyPath = directory.appendingPathComponent("node.key").path
        let output = Pipe()
        let process = try ChildProcess.run(binary, arguments: ["node", "--listen", "127.0.0.1:0", "--node-key", keyPath, "--generate-key",
                                                               "--auth", "token-file:\(tokenPath)", "--max-sessions", "8",
                                                               "--step-timeout", "30", "--rate-limits", "auth-failures-per-minute=2"],
                                           standardOutput: .pipe(output), standardError: .null)
        defer { process.terminate(grace: 5) }   // never leave the node behind on a failed expectation
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
        let port = try #require(text.split(separator: "\n").first { $0.hasPrefix("silentshard node listening on port ") }
            .flatMap { Int($0.split(separator: " ").last ?? "") })
        let key = try #require(text.split(separator: "\n").first { $0.hasPrefix("node verifying key") }?.split(separator: " ").last)
        #expect(key.count == 64)
        let saved = try String(contentsOfFile: keyPath, encoding: .utf8)
        #expect(!text.contains(saved.trimmingCharacters(in: .whitespacesAndNewlines)), "the seed is never printed")
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let client = DuoNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)", authenticationToken: "cli-token"))
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        let error = await thrownError { _ = try await client.read() }
        #expect(closeCode(error) == Int(NodeCloseCode.routeNotServed.rawValue), "a node without --database serves no steps")
        try await client.disconnect()
        // --rate-limits: two refused tokens block this address (session.md §9.5), whatever the next token.
        for _ in 0..<2 {
            let bad = DuoNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)", authenticationToken: "wrong"))
            try await bad.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
            #expect(closeCode(await thrownError { _ = try await bad.read() }) == Int(NodeCloseCode.unauthorized.rawValue))
            try? await bad.disconnect()
        }
        #expect(await thrownError { try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil) } as? NetworkError
            == .handshakeRejected(status: 429))

        process.terminate()   // SIGTERM
        let (exited, reason, status) = try await offPool { () -> (Bool, Bool, Int32) in
            let exited = process.waitForExit(timeout: 30)
            guard case .exit(let status)? = process.termination else { return (exited, false, process.terminationStatus) }
            return (exited, true, status)
        }
        #expect(exited, "the node stops on SIGTERM")
        #expect(reason)
        #expect(status == 0)
        // An unknown --rate-limits setting is refused at start.
        let limits = try ChildProcess.run(binary, arguments: ["node", "--node-key", keyPath, "--auth", "none",
                                                              "--rate-limits", "launches=3"],
                                          standardOutput: .null, standardError: .null)
        #expect(try await offPool { _ = limits.waitForExit(); return limits.terminationStatus } == 2)
        // --generate-key refuses to overwrite.
        let again = try ChildProcess.run(binary, arguments: ["node", "--node-key", keyPath, "--generate-key", "--auth", "none"],
                                         standardOutput: .null, standardError: .null)
        #expect(try await offPool { _ = again.waitForExit(); return again.terminationStatus } == 2)
    }
}
