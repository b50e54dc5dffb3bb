import CloudNode
import duo
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Security review finding 6: the node buffered a whole first message, up to the maximum message size
/// (16 MiB), before its 8 KiB token check — 64 unauthenticated connections took a node from 32 to 1,059 MiB —
/// and a token timeout was not counted as a failed authentication, so nothing blocked the repeat. Now the
/// first message may be at most 8 KiB (closed 1009 the moment it passes), nothing more is read from the
/// socket until the token is verified, the default maximum message is 1 MiB (session.md §3.6), and a token
/// timeout counts against the address.
@Suite("Finding 6: memory before authentication stays bounded", .serialized, .heavy, .timeLimit(.minutes(30)))
struct PreAuthenticationMemoryTests {
    /// The resident set of `pid` in bytes (Linux `/proc`).
    static func residentBytes(_ pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }

    /// A WebSocket upgrade on a raw socket, then the head of one binary message announcing `announced`
    /// bytes and the first `length` of them (as many as the node takes within the send timeout): an
    /// incomplete message the node holds until the token deadline. Returns the open socket.
    static func unauthenticatedSender(port: Int, announced: Int, length: Int) throws -> Int32 {
        guard let (fd, _) = LoopbackSocket.upgrade(port: port, timeout: 2) else { throw NetworkError.connectionLost }
        // FIN + binary, masked, 64-bit length, mask key 0 (payload unchanged).
        var frame: [UInt8] = [0x82, 0x80 | 127]
        frame += withUnsafeBytes(of: UInt64(announced).bigEndian, Array.init)
        frame += [0, 0, 0, 0]
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let chunk = [UInt8](repeating: 0x41, count: 64 << 10)
        var sent = 0
        while sent < length {
            let count = chunk.withUnsafeBytes { send(fd, $0.baseAddress, min($0.count, length - sent), Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { break }   // closed by the node, or it stopped reading (timeout)
            sent += count
        }
        return fd
    }

    @Test func unauthenticatedConnectionsCannotFillTheNodesMemory() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: NodeProcess.binary.path), "build the silentshard product first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("preauth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try (Hex.encode(SecureRandom.bytes(count: 32)) + "\n").write(toFile: path("node.key"), atomically: true, encoding: .utf8)
        try (Hex.encode(SecureRandom.bytes(count: 32)) + "\n").write(toFile: path("master"), atomically: true, encoding: .utf8)
        try Data(SecureRandom.bytes(count: 32)).write(to: URL(fileURLWithPath: path("jwt")))
        // Rate limits off: this test is about memory, not about the per-address connection limit.
        let node = try await NodeProcess.start(arguments: [
            "--auth", "jwt-hs256:" + path("jwt"), "--node-key", path("node.key"), "--database", path("node.sqlite"),
            "--master-key", path("master"), "--max-message-size", "\(16 << 20)", "--rate-limits", "off"])
        let pid = node.process.processIdentifier
        try await Task.sleep(for: .milliseconds(300))
        let baseline = try #require(Self.residentBytes(pid))

        // 64 connections, each sending 4 MiB of a first message announced as almost 16 MiB (no token).
        let sockets = try await Task.detached {
            try (0..<64).map { _ in try Self.unauthenticatedSender(port: node.port, announced: (16 << 20) - 1, length: 4 << 20) }
        }.value
        try await Task.sleep(for: .milliseconds(500))
        let loaded = try #require(Self.residentBytes(pid))
        for fd in sockets { close(fd) }
        try await Task.sleep(for: .seconds(1))
        let after = try #require(Self.residentBytes(pid))
        await node.kill()
        print("pre-authentication memory: baseline \(baseline >> 20) MiB, 64 connections \(loaded >> 20) MiB, after \(after >> 20) MiB")
        // Without the limit each connection held its 4 MiB: 256 MiB above the baseline.
        #expect(loaded - baseline < 48 << 20, "RSS \(baseline >> 20) → \(loaded >> 20) MiB")
        #expect(after - baseline < 48 << 20, "RSS \(baseline >> 20) → \(after >> 20) MiB after the connections closed")
    }

    /// A connection that never sends its token counts as a failed authentication: the address is
    /// blocked after the limit, like after bad tokens.
    @Test func tokenTimeoutsCountAsFailedAuthentications() async throws {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 2, blockSeconds: 600))
        let node = try TestNode.start(verifier: try StaticTokenVerifier(token: "good"), tokenTimeout: .milliseconds(200),
                                      rateLimiter: limiter)
        for _ in 0..<2 {
            let silent = DuoNetworkClient(websocketConfig: node.clientConfig())
            try await silent.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
            #expect(closeCode(await thrownError { _ = try await silent.read() }) == Int(NodeCloseCode.authenticationTimeout.rawValue))
            try? await silent.disconnect()
        }
        let good = DuoNetworkClient(websocketConfig: node.clientConfig(token: "good"))
        await #expect(throws: NetworkError.handshakeRejected(status: 429)) {
            try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        }
        await node.server.stop()
    }

    /// The first message is held to the token limit even with a large maximum message size.
    @Test func aFirstMessageOverTheTokenLimitIsRefusedAtOnce() async throws {
        let node = try TestNode.start(verifier: try StaticTokenVerifier(token: "good"))
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        let error = await thrownError {
            try await client.send(bytes: Data(count: 9000))
            _ = try await client.read()
        }
        #expect(closeCode(error) == 1009)
        try? await client.disconnect()
        // A token and then a large message are fine.
        let good = DuoNetworkClient(websocketConfig: node.clientConfig(token: "good"))
        try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await good.send(bytes: Data(count: 2 << 20))
        #expect(try await good.read().count == 2 << 20)
        try await good.disconnect()
        await node.server.stop()
    }
}
