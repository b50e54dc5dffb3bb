import Foundation
import SilentShardTestSupport
import Testing
@testable import SilentShardCore

/// The Linux/Apple WebSocket engine against an independent peer (Python `websockets`).
@Suite("WebSocket engine against Python websockets", .timeLimit(.minutes(30)))
struct WebSocketInteropTests {
    @Test(arguments: [false, true])
    func subprotocolTokenTextAndBinary(secure: Bool) async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, secure: secure, token: "tok-\(secure)"))
        let hello = try await engine.open(mode: "echo", subprotocol: "duo-instance")
        #expect(hello == PeerHello(path: "/v3/test/echo", query: "params=echo", offered: ["duo-instance"], selected: "duo-instance"))
        // The token arrived first (the peer echoes it back first).
        #expect(try await engine.read() == Data("tok-\(secure)".utf8))
        try await engine.send(.text("héllo ✓"))
        #expect(try await engine.read() == Data("héllo ✓".utf8))
        try await engine.send(.binary(Data([0, 1, 2, 255])))
        #expect(try await engine.read() == Data([0, 1, 2, 255]))
        await engine.disconnect()
        await #expect(throws: NetworkError.notConnected) { try await engine.read() }
    }

    @Test(arguments: [false, true])
    func sizesFromZeroToEightMiB(secure: Bool) async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, secure: secure))
        try await engine.open()
        for size in [0, 1, 125, 126, 65535, 65536, 1 << 20, (1 << 20) + 1, 8 << 20] {
            var payload = Data(count: size)
            payload.withUnsafeMutableBytes { raw in
                for index in stride(from: 0, to: raw.count, by: 4096) { raw[index] = UInt8(truncatingIfNeeded: index / 4096 + size) }
            }
            try await engine.send(.binary(payload))
            let echoed = try await engine.read()
            #expect(echoed == payload, "size \(size)")
        }
        await engine.disconnect()
    }

    @Test func fragmentedMessagesFromTheServer() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer))
        try await engine.open(mode: "fragment:1000")
        let text = String(repeating: "añb✓", count: 1000)
        try await engine.send(.text(text))
        #expect(try await engine.read() == Data(text.utf8))
        let binary = Data((0..<100_003).map { UInt8(truncatingIfNeeded: $0) })
        try await engine.send(.binary(binary))
        #expect(try await engine.read() == binary)
        try await engine.send(.binary(Data()))
        #expect(try await engine.read() == Data())
        await engine.disconnect()
    }

    @Test(arguments: [false, true])
    func disconnectSendsCloseCode1000(secure: Bool) async throws {
        struct CloseInfo: Decodable, Equatable { var code: Int?; var reason: String? }
        let peer = try await PythonPeer.shared()
        let tag = "tag-\(UUID().uuidString)"
        let engine = WebSocketClientEngine(config: peerConfig(peer, secure: secure))
        try await engine.open(mode: tag)
        try await engine.send(.binary(Data([1])))
        _ = try await engine.read()
        await engine.disconnect()
        try await engine.open(mode: "closeinfo:\(tag)")
        let info = try JSONDecoder().decode(CloseInfo.self, from: try await engine.read())
        #expect(info == CloseInfo(code: 1000, reason: ""))
        await engine.disconnect()
    }

    @Test func answersPings() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer))
        try await engine.open(mode: "ping")
        #expect(try await engine.read() == Data("pong-received".utf8))
        await engine.disconnect()
    }

    @Test(arguments: [false, true])
    func serverCloseWithCode(secure: Bool) async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, secure: secure))
        try await engine.open(mode: "close:4001:go away")
        await #expect(throws: NetworkError.closedByPeer(code: 4001, reason: "go away")) { try await engine.read() }
        await #expect(throws: NetworkError.closedByPeer(code: 4001, reason: "go away")) { try await engine.send(.binary(Data([1]))) }
        await engine.disconnect()
    }

    @Test(arguments: [false, true])
    func serverTCPAbort(secure: Bool) async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, secure: secure))
        try await engine.open(mode: "abort")
        await #expect(throws: NetworkError.connectionLost) { try await engine.read() }
        await engine.disconnect()
    }

    @Test func connectionRefusedFailsFast() async throws {
        let (port, held) = try refusingPort()
        defer { close(held) }
        let engine = WebSocketClientEngine(config: WebsocketConfig(url: "ws://127.0.0.1:\(port)"))
        let error = await thrownError { try await engine.open() }
        // `.connectionRefused`, not `.timeout`: the refusal ended the attempt, not the 15 s timer.
        // (No wall-clock bound: tests share two cores with CPU-heavy suites.)
        #expect(error as? NetworkError == .connectionRefused(host: "127.0.0.1", port: port))
    }

    @Test func readTimeout() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, readTimeout: .milliseconds(300)))
        try await engine.open(mode: "silent")
        let start = ContinuousClock.now
        await #expect(throws: NetworkError.timeout) { try await engine.read() }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(290) && elapsed < .seconds(120))  // never before the timeout
        await engine.disconnect()
    }

    @Test func cancellingAReadLeavesTheConnectionUsable() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer))
        try await engine.open()
        let url = try NetworkRoute.url(base: peerConfig(peer).url, segments: ["test", "echo"], params: "silent", websocket: true)
        // A separate connection for the cancelled read (the engine is not Sendable).
        let connection = try await WebSocketTransport.connect(url: url, subprotocol: "trio", settings: WebSocketSettings(peerConfig(peer)))
        _ = try await connection.receive()  // hello
        let reader = Task { try await connection.receive() }
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        let result = await reader.result
        #expect(throws: CancellationError.self) { try result.get() }
        await connection.close()
        try await engine.send(.text("still here"))
        #expect(try await engine.read() == Data("still here".utf8))
        await engine.disconnect()
    }

    @Test func handshakeFailuresAreTyped() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer))
        var error = await thrownError { try await engine.open(mode: "wrongproto", subprotocol: "trio") }
        #expect(error as? NetworkError == .subprotocolMismatch(offered: "trio", selected: "not-trio"))
        error = await thrownError { try await engine.open(mode: "noproto", subprotocol: "trio") }
        #expect(error as? NetworkError == .subprotocolMismatch(offered: "trio", selected: nil))
        error = await thrownError { try await engine.open(mode: "reject:403") }
        #expect(error as? NetworkError == .handshakeRejected(status: 403))
        error = await thrownError { try await engine.open(mode: "reject:503") }
        #expect(error as? NetworkError == .handshakeRejected(status: 503))
        // Still usable afterwards.
        try await engine.open()
        await engine.disconnect()
    }

    @Test func certificateVerification() async throws {
        let peer = try await PythonPeer.shared()
        // An unrelated CA, and the system store: both must refuse the test CA's certificate.
        for roots in [[peer.otherCACertificate], []] {
            var config = peerConfig(peer, secure: true)
            config.trustedRootCertificates = roots
            let error = await thrownError { try await WebSocketClientEngine(config: config).open() }
            guard case .tlsFailure(let reason)? = error as? NetworkError else {
                Issue.record("expected a TLS failure, got \(String(describing: error))")
                continue
            }
            #expect(reason.contains("certificate verif"))
        }
        // The right CA but a certificate for another host name.
        var config = peerConfig(peer, secure: true)
        config.url = "wss://localhost:\(peer.wssWrongHostPort)"
        let error = await thrownError { try await WebSocketClientEngine(config: config).open() }
        guard case .tlsFailure(let reason)? = error as? NetworkError else {
            Issue.record("expected a TLS failure, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("hostname mismatch"))
        // The right CA, by IP address (the certificate has 127.0.0.1 as a SAN).
        config.url = "wss://127.0.0.1:\(peer.wssPort)"
        let engine = WebSocketClientEngine(config: config)
        try await engine.open()
        await engine.disconnect()
    }

    @Test func oversizedIncomingMessageCloses1009() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, maximumMessageSize: 1000))
        try await engine.open()
        await #expect(throws: NetworkError.messageTooLarge(limit: 1000)) { try await engine.send(.binary(Data(count: 1001))) }
        await engine.disconnect()
        // The peer echoes 1000 bytes of text as 1000 bytes: fine; a hello over the limit is not.
        let tiny = WebSocketClientEngine(config: peerConfig(peer, maximumMessageSize: 20))
        let url = try NetworkRoute.url(base: tiny.config.url, segments: ["test", "echo"], params: nil, websocket: true)
        try await tiny.connect(url: url, subprotocol: "trio")
        await #expect(throws: NetworkError.messageTooLarge(limit: 20)) { try await tiny.read() }
        await tiny.disconnect()
    }
}

/// A loopback TCP port that refuses connections for as long as the returned socket is open: bound, never
/// listening, so the kernel answers RST and no other test can take the port meanwhile (a port that was
/// merely free once could be handed to a concurrent listener on a busy machine). Close the socket after.
func refusingPort() throws -> (port: Int, socket: Int32) {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    let port = Int(UInt16(bigEndian: address.sin_port))
    guard fd >= 0, bound == 0, port != 0 else {
        if fd >= 0 { close(fd) }
        throw NetworkError.connectionFailed(reason: "no refusing port")
    }
    return (port, fd)
}
