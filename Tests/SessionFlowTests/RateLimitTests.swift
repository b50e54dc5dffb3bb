import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// session.md §9.5 at every node (duo's node; trio's A, the entry, and B, behind the link, each with their own
/// limits): the app sees `rateLimited(retryAfter:)` with the node's REJECT `retry_after_s`, and nothing else changes.
@Suite("Node runner: session.md §9.5 rate limits", .heavy, .timeLimit(.minutes(30)))
struct RateLimitTests {
    private func error(_ body: () async throws -> Void) async -> SilentShardError? {
        do { try await body() } catch { return error as? SilentShardError }
        return nil
    }

    private func retryAfter(_ error: SilentShardError?) -> UInt32? {
        if case .rateLimited(let seconds) = error { return seconds }
        return nil
    }

    /// Which nodes of `mode` a limiter may sit at: 0 = the entry node (duo's node, trio's A), 1 = trio's B.
    static func nodes(_ mode: Keyshare.Mode) -> [Int] { mode == .duo ? [0] : [0, 1] }

    @Test("keygens past the principal's hourly count are RATE_LIMITED with the wait, at every node; signing goes on",
          arguments: Keyshare.Mode.allCases)
    func keyCreations(mode: Keyshare.Mode) async throws {
        // duo as it always ran (ECDSA, a budget of 2); trio as it always ran (EdDSA, a budget of 1) and the other way.
        let runs: [(Keyshare.Algorithm, Int)] = mode == .duo ? [(.ecdsa, 2)] : [(.eddsa, 1), (.ecdsa, 2)]
        for (algorithm, budget) in runs {
            for node in Self.nodes(mode) {
                let limiter = NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: budget))
                let fixture = try SessionFixture(mode: mode, algorithm: algorithm, rateLimiterA: node == 0 ? limiter : nil,
                                                 rateLimiterB: node == 1 ? limiter : nil)
                let first = try await fixture.session.keygen()
                for _ in 1..<budget { _ = try await fixture.session.keygen() }
                let refused = await error { _ = try await fixture.session.keygen() }
                #expect(retryAfter(refused).map { (61...3_600).contains($0) } == true,
                        "\(mode) \(algorithm) node \(node): \(String(describing: refused))")
                let message = testMessage(algorithm, "rate limits")
                #expect(try verify(try await fixture.session.signature(keyshare: first, message: message), message: message,
                                   keyshare: first))
            }
        }
    }

    @Test("after the limit's failed device signatures, that device is RATE_LIMITED for the minute; another device is served",
          arguments: Keyshare.Mode.allCases)
    func deviceSignatures(mode: Keyshare.Mode) async throws {
        let corrupt = LockedValue(false)
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa, tamperAppSends: { index, data in
            guard index == 0, corrupt.withLock({ $0 }) else { return data }
            var bytes = [UInt8](data)
            bytes[bytes.count - 1] ^= 0x80   // the device signature of the SETUP
            return Data(bytes)
        }, rateLimiterA: NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 2)))
        let keyshare = try await fixture.session.keygen()
        corrupt.withLock { $0 = true }
        for _ in 0..<2 {
            #expect(await error { _ = try await fixture.session.keygen() } == .authenticationFailed(reason: "device signature"))
        }
        corrupt.withLock { $0 = false }
        let message = Data(repeating: 0x08, count: 32)
        let refused = await error { _ = try await fixture.session.signature(keyshare: keyshare, message: message) }
        #expect(retryAfter(refused).map { (1...60).contains($0) } == true, "\(String(describing: refused))")
        let other = fixture.session(.ecdsa, signer: SoftwareEd25519MessageSigner())
        let otherKeyshare = try await other.keygen()
        #expect(try verifyECDSA(try await other.signature(keyshare: otherKeyshare, message: message), hash: message,
                                keyshare: otherKeyshare))
    }

    @Test("a key at its concurrent-signing limit is RATE_LIMITED; finished signings give their place back",
          arguments: Keyshare.Mode.allCases)
    func signingSessions(mode: Keyshare.Mode) async throws {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(signingSessionsPerKey: 1))
        let fixture = try SessionFixture(mode: mode, algorithm: .eddsa, rateLimiterA: limiter)
        let keyshare = try await fixture.session.keygen()
        let message = Data("rate limits".utf8)
        for _ in 0..<3 {
            #expect(try verifyEdDSA(try await fixture.session.signature(keyshare: keyshare, message: message), message: message,
                                    keyshare: keyshare))
        }
        // Another session holds the key's one place.
        let keyID = keyshare.keyId.lowercased()
        #expect(limiter.startSigning(keyID: keyID) == .allowed)
        #expect(retryAfter(await error { _ = try await fixture.session.signature(keyshare: keyshare, message: message) }) == 1)
        limiter.endSigning(keyID: keyID)
        #expect(try verifyEdDSA(try await fixture.session.signature(keyshare: keyshare, message: message), message: message,
                                keyshare: keyshare))
    }

    @Test("node B at its concurrent-signing limit for a key: signing with B is RATE_LIMITED, with A it goes on")
    func signingSessionsAtB() async throws {
        let limiterB = NodeRateLimiter(limits: NodeRateLimits(signingSessionsPerKey: 1))
        let fixture = try TrioFixture(algorithm: .ecdsa, rateLimiterB: limiterB)
        let keyshare = try await fixture.session.keygen()
        let message = Data(repeating: 0x33, count: 32)
        let keyID = keyshare.keyId.lowercased()
        #expect(limiterB.startSigning(keyID: keyID) == .allowed)   // another session holds B's one place
        #expect(retryAfter(await error { _ = try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeB) }) == 1)
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeA),
                                hash: message, keyshare: keyshare))
        limiterB.endSigning(keyID: keyID)
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeB),
                                hash: message, keyshare: keyshare))
    }

    /// Second review finding 8: a hard derivation creates a key (the child) but was not counted with
    /// keygens and imports, so a principal past its hourly budget could go on creating keys by deriving.
    /// (Hard derivation is trio's.)
    @Test("finding 8: a hard derivation counts as a key creation at A and at B")
    func finding8_hardDerivationCountsAsKeyCreation() async throws {
        for atA in [true, false] {
            let limiter = NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 2))
            let fixture = try TrioFixture(algorithm: .ecdsa, rateLimiterA: atA ? limiter : nil, rateLimiterB: atA ? nil : limiter)
            let keyshare = try await fixture.session.keygen()
            _ = try await fixture.session.hardDerivation(keyshare: keyshare, path: "m/44'/60'/0'")
            // Two key creations: the budget is spent.
            #expect(retryAfter(await error { _ = try await fixture.session.keygen() }).map { (61...3_600).contains($0) } == true,
                    "node \(atA ? "A" : "B")")
            #expect(retryAfter(await error { _ = try await fixture.session.hardDerivation(keyshare: keyshare, path: "m/44'/60'/1'") })
                .map { (61...3_600).contains($0) } == true, "node \(atA ? "A" : "B")")
        }
    }
}
