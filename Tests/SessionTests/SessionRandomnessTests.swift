import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import Synchronization
import Testing

/// design.md §5.2: the engine's randomness is injected. Every machine step the driver runs draws from its
/// `SessionRandomness`, and constructors that need randomness (FROST nonces and polynomials) draw from
/// the caller's generator: with one pinned stream a run is reproducible, and a different stream changes
/// every message.
@Suite("Session randomness is injected")
struct SessionRandomnessTests {
    /// SplitMix64 over one locked state: every generator handed out continues the same stream, so two
    /// steps never see the same bytes (what `SessionRandomness.init` asks of a pinned source).
    final class PinnedStream: Sendable {
        private let state: Mutex<UInt64>
        private let draws = Mutex(0)
        init(seed: UInt64) { state = Mutex(seed) }

        struct Generator: RandomNumberGenerator {
            let stream: PinnedStream
            mutating func next() -> UInt64 { stream.next() }
        }

        func next() -> UInt64 {
            draws.withLock { $0 += 1 }
            return state.withLock { s in
                s &+= 0x9E37_79B9_7F4A_7C15
                var z = s
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                return z ^ (z >> 31)
            }
        }

        var drawCount: Int { draws.withLock { $0 } }
        var randomness: SessionRandomness { SessionRandomness { Generator(stream: self) } }
    }

    static let instanceID = InstanceID(checked: [UInt8](repeating: 0x11, count: 32))
    static let setupHash = SetupHash(checked: [UInt8](repeating: 0x22, count: 32))

    /// The first round of a duo DKLs23 keygen at the app, run by the driver with `randomness`.
    static func dklsFirstRound(_ randomness: SessionRandomness) async throws -> [ProtocolMessage] {
        let run = try DKLsDKGRun.keygen(local: 0, partyCount: 2, threshold: 2, instanceID: instanceID,
                                        setupHash: setupHash, mode: .duo, groupID: nil)
        return try await SessionDriver.start(run, randomness: randomness).1
    }

    @Test func theDriversStepsDrawFromTheInjectedSource() async throws {
        let first = PinnedStream(seed: 7)
        let a = try await Self.dklsFirstRound(first.randomness)
        #expect(first.drawCount > 0)
        let b = try await Self.dklsFirstRound(PinnedStream(seed: 7).randomness)
        let c = try await Self.dklsFirstRound(PinnedStream(seed: 8).randomness)
        #expect(!a.isEmpty)
        #expect(a.map(\.payload) == b.map(\.payload))
        #expect(a.map(\.payload) != c.map(\.payload))
        // The system source: fresh every time.
        let d = try await Self.dklsFirstRound(.system)
        let e = try await Self.dklsFirstRound(.system)
        #expect(d.map(\.payload) != e.map(\.payload))
    }

    /// FROST draws its polynomial (keygen) and nonces (signing) when the run is made: from the caller's
    /// generator.
    @Test func constructorsDrawFromTheCallersGenerator() async throws {
        func frostKeygenRound1(seed: UInt64) async throws -> [UInt8] {
            var rng = PinnedStream.Generator(stream: PinnedStream(seed: seed))
            let run = try FROSTDKGRun.keygen(local: 1, partyCount: 2, threshold: 2, instanceID: Self.instanceID,
                                             mode: .duo, groupID: nil, using: &rng)
            let messages = try await SessionDriver.start(run, randomness: PinnedStream(seed: seed ^ 1).randomness).1
            return messages.first?.payload ?? []
        }
        let a = try await frostKeygenRound1(seed: 1), b = try await frostKeygenRound1(seed: 1)
        let c = try await frostKeygenRound1(seed: 2)
        #expect(!a.isEmpty)
        #expect(a == b)
        #expect(a != c)
    }
}
