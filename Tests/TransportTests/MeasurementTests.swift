import Foundation
import SilentShardTestSupport
import Testing
@testable import SilentShardCore

/// Prints loopback figures (round trip, 8 MiB echo) for the report; asserts correctness only (figures
/// come from `scripts/bench transport` in release mode, never from timed tests).
@Suite("Transport measurements", .timeLimit(.minutes(30)))
struct MeasurementTests {
    @Test(arguments: [false, true])
    func loopbackFigures(secure: Bool) async throws {
        let peer = try await PythonPeer.shared()
        let engine = WebSocketClientEngine(config: peerConfig(peer, secure: secure))
        let connectStart = ContinuousClock.now
        try await engine.open()
        let connectTime = ContinuousClock.now - connectStart
        var roundTrips: [Duration] = []
        for index in 0..<200 {
            let start = ContinuousClock.now
            try await engine.send(.binary(Data(repeating: UInt8(truncatingIfNeeded: index), count: 32)))
            _ = try await engine.read()
            roundTrips.append(ContinuousClock.now - start)
        }
        roundTrips.sort()
        let big = Data(repeating: 0xA5, count: 8 << 20)
        var echoes: [Duration] = []
        for _ in 0..<3 {
            let start = ContinuousClock.now
            try await engine.send(.binary(big))
            let echoed = try await engine.read()
            echoes.append(ContinuousClock.now - start)
            #expect(echoed.count == big.count)
        }
        await engine.disconnect()
        let scheme = secure ? "wss" : "ws"
        print("measure \(scheme): connect+upgrade \(connectTime), 32 B round trip median \(roundTrips[100]) p95 \(roundTrips[190]), 8 MiB echo best \(echoes.min() ?? .zero)")
    }
}
