import MPCCrypto
import Foundation
import SilentShardTestSupport
import Testing
@testable import SilentShardCore

/// The engine against a hand-written server that breaks the rules (interop/ws_peer.py, raw port).
@Suite("WebSocket engine against a misbehaving peer", .timeLimit(.minutes(30)))
struct MisbehavingPeerTests {
    func rawEngine(_ peer: PythonPeer, connectTimeout: Duration = .seconds(5), maximumMessageSize: Int = 1 << 20) -> WebSocketClientEngine {
        WebSocketClientEngine(config: WebsocketConfig(url: peer.raw, connectTimeout: connectTimeout, readTimeout: .seconds(5),
                                                      maximumMessageSize: maximumMessageSize))
    }

    func connect(_ engine: WebSocketClientEngine, mode: String) async throws {
        let url = try NetworkRoute.url(base: engine.config.url, segments: ["trio", "keygen"], params: mode, websocket: true)
        try await engine.connect(url: url, subprotocol: "trio")
    }

    @Test func framingViolationsCloseWithTheRightCode() async throws {
        let peer = try await PythonPeer.shared()
        let cases: [(String, NetworkError)] = [
            ("masked", .protocolViolation(closeCode: 1002)),
            ("badutf8", .protocolViolation(closeCode: 1007)),
            ("huge", .messageTooLarge(limit: 1 << 20)),
        ]
        for (mode, expected) in cases {
            let engine = rawEngine(peer)
            try await connect(engine, mode: mode)
            let error = await thrownError { _ = try await engine.read() }
            #expect(error as? NetworkError == expected, "\(mode)")
            await engine.disconnect()
        }
    }

    @Test func handshakeViolations() async throws {
        let peer = try await PythonPeer.shared()
        var error = await thrownError { try await connect(rawEngine(peer), mode: "extension") }
        #expect(error as? NetworkError == .invalidHandshake(reason: "extension not offered"))
        error = await thrownError { try await connect(rawEngine(peer), mode: "badaccept") }
        #expect(error as? NetworkError == .invalidHandshake(reason: "wrong Sec-WebSocket-Accept"))
    }

    @Test func connectTimeout() async throws {
        let peer = try await PythonPeer.shared()
        let start = ContinuousClock.now
        let error = await thrownError { try await connect(rawEngine(peer, connectTimeout: .milliseconds(300)), mode: "stall") }
        #expect(error as? NetworkError == .timeout)
        #expect(ContinuousClock.now - start >= .milliseconds(290))  // never before the timeout
    }

    @Test func cancellingConnectIsPrompt() async throws {
        let peer = try await PythonPeer.shared()
        let url = try NetworkRoute.url(base: peer.raw, segments: ["trio", "keygen"], params: "stall", websocket: true)
        let settings = WebSocketSettings(WebsocketConfig(url: peer.raw, connectTimeout: .seconds(3600)))
        let task = Task { try await WebSocketTransport.connect(url: url, subprotocol: "trio", settings: settings) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let result = await task.result
        // CancellationError (not `.timeout`, which would take an hour): the cancellation ended it.
        #expect(throws: CancellationError.self) { _ = try result.get() }
    }

    @Test func closeHandshakeIsBoundedWhenThePeerNeverAnswers() async throws {
        let peer = try await PythonPeer.shared()
        // closeTimeout = min(connectTimeout, 5 s). The connection's own close waits for the peer's close frame
        // until the timer; it never answers here.
        let settings = WebSocketSettings(WebsocketConfig(url: peer.raw, connectTimeout: .milliseconds(400)))
        let url = try NetworkRoute.url(base: peer.raw, segments: ["trio", "keygen"], params: "noclose", websocket: true)
        let connection = try await WebSocketTransport.connect(url: url, subprotocol: "trio", settings: settings)
        #expect(try await connection.receive().data == Data([42]))
        let start = ContinuousClock.now
        await connection.close()
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(350) && elapsed < .seconds(120))  // bounded, and not before the timer
    }

    /// The engine's `disconnect` does not wait for that handshake (it would cost a step one round trip): it
    /// returns at once and the connection closes on its own thread, bounded as above.
    @Test func disconnectDoesNotWaitForThePeersCloseFrame() async throws {
        let peer = try await PythonPeer.shared()
        let engine = rawEngine(peer, connectTimeout: .seconds(30))
        try await connect(engine, mode: "noclose")
        #expect(try await engine.read() == Data([42]))
        let start = ContinuousClock.now
        await engine.disconnect()
        #expect(ContinuousClock.now - start < .seconds(25), "returned before the 30 s close timer")
        await #expect(throws: NetworkError.notConnected) { _ = try await engine.read() }
    }

    @Test func sendsThePeerNeverTakesTimeOut() async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: WebsocketConfig(url: peer.raw, readTimeout: .milliseconds(500),
                                                                  maximumMessageSize: 16 << 20))
        try await connect(engine, mode: "noread")
        let start = ContinuousClock.now
        let error = await thrownError {
            for _ in 0..<8 { try await engine.send(.binary(Data(count: 16 << 20))) }
        }
        #expect(error as? NetworkError == .timeout)
        #expect(ContinuousClock.now - start < .seconds(20))
        await engine.disconnect()
    }

    @Test func cancellingABlockedSendDropsTheConnectionPromptly() async throws {
        let peer = try await PythonPeer.shared()
        let url = try NetworkRoute.url(base: peer.raw, segments: ["trio", "sign"], params: "noread", websocket: true)
        let settings = WebSocketSettings(WebsocketConfig(url: peer.raw, readTimeout: .seconds(300), maximumMessageSize: 64 << 20))
        let connection = try await WebSocketTransport.connect(url: url, subprotocol: "trio", settings: settings)
        // Send until one blocks (the peer never reads); that one is then in the I/O thread's hands.
        // Unbounded, so no host's socket buffers can absorb the whole run and end it without an error.
        let progress = SendProgress()
        let sender = Task {
            let chunk = Data(count: 1 << 20)
            while true {
                progress.started()
                try await connection.send(.binary(chunk))
                progress.completed()
            }
        }
        // Wait until a send has been in flight, without progress, for a while (a scheduling pause
        // between two sends must not be mistaken for a blocked send).
        var stalledSince: ContinuousClock.Instant?
        var last = progress.snapshot
        let giveUp = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < giveUp {
            try await Task.sleep(for: .milliseconds(50))
            let now = progress.snapshot
            if now == last, now.started > now.completed {
                if let since = stalledSince, ContinuousClock.now - since >= .milliseconds(500) { break }
                stalledSince = stalledSince ?? .now
            } else {
                stalledSince = nil
            }
            last = now
        }
        #expect(last.completed >= 1 && last.started == last.completed + 1, "no send ever blocked: \(last)")
        let start = ContinuousClock.now
        sender.cancel()
        let result = await sender.result
        #expect(throws: (any Error).self) { try result.get() }
        #expect(ContinuousClock.now - start < .seconds(5))
        // The connection is gone: further use fails at once.
        await #expect(throws: NetworkError.connectionLost) { try await connection.send(.binary(Data([1]))) }
        await connection.close()
    }
}

/// Counts a sender's started and completed sends (read by the test while the sender runs).
private final class SendProgress: Sendable {
    struct Snapshot: Equatable, CustomStringConvertible {
        var started = 0
        var completed = 0
        var description: String { "started \(started), completed \(completed)" }
    }
    private let state = LockedValue(Snapshot())
    var snapshot: Snapshot { state.withLock { $0 } }
    func started() { state.withLock { $0.started += 1 } }
    func completed() { state.withLock { $0.completed += 1 } }
}
