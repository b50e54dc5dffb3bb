import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// session.md §9.5 at both trio nodes: A (the entry) and B (behind the link) each enforce their own limits, and
/// the app sees `rateLimited(retryAfter:)` from either.
@Suite("Trio: session.md §9.5 rate limits at node A and node B", .heavy, .timeLimit(.minutes(30)))
struct TrioRateLimitTests {
    private func retryAfter(_ body: () async throws -> Void) async -> UInt32? {
        do { try await body() } catch let error as SilentShardError {
            if case .rateLimited(let seconds) = error { return seconds }
            Issue.record("expected rateLimited, got \(error)")
        } catch {
            Issue.record("expected rateLimited, got \(error)")
        }
        return nil
    }

    @Test("node A refuses a keygen past the principal's hourly count; node B's refusal reaches the app too")
    func keyCreations() async throws {
        let atA = try TrioFixture(algorithm: .eddsa,
                                  rateLimiterA: NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 1)))
        _ = try await atA.session.keygen()
        #expect(await retryAfter { _ = try await atA.session.keygen() }.map { (61...3_600).contains($0) } == true)

        let atB = try TrioFixture(algorithm: .eddsa,
                                  rateLimiterB: NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 1)))
        _ = try await atB.session.keygen()
        #expect(await retryAfter { _ = try await atB.session.keygen() }.map { (61...3_600).contains($0) } == true)
    }

    /// Second review finding 8: a hard derivation creates a key (the child) but was not counted with
    /// keygens and imports, so a principal past its hourly budget could go on creating keys by deriving.
    @Test("finding 8: a hard derivation counts as a key creation at A and at B")
    func finding8_hardDerivationCountsAsKeyCreation() async throws {
        for atA in [true, false] {
            let limiter = NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 2))
            let fixture = try TrioFixture(algorithm: .ecdsa, rateLimiterA: atA ? limiter : nil, rateLimiterB: atA ? nil : limiter)
            let keyshare = try await fixture.session.keygen()
            _ = try await fixture.session.hardDerivation(keyshare: keyshare, path: "m/44'/60'/0'")
            // Two key creations: the budget is spent.
            #expect(await retryAfter { _ = try await fixture.session.keygen() }.map { (61...3_600).contains($0) } == true,
                    "node \(atA ? "A" : "B")")
            #expect(await retryAfter { _ = try await fixture.session.hardDerivation(keyshare: keyshare, path: "m/44'/60'/1'") }
                .map { (61...3_600).contains($0) } == true, "node \(atA ? "A" : "B")")
        }
    }

    @Test("node B at its concurrent-signing limit for a key: signing with B is RATE_LIMITED, with A it goes on")
    func signingSessionsAtB() async throws {
        let limiterB = NodeRateLimiter(limits: NodeRateLimits(signingSessionsPerKey: 1))
        let fixture = try TrioFixture(algorithm: .ecdsa, rateLimiterB: limiterB)
        let keyshare = try await fixture.session.keygen()
        let message = Data(repeating: 0x33, count: 32)
        let keyID = keyshare.keyId.lowercased()
        #expect(limiterB.startSigning(keyID: keyID) == .allowed)   // another session holds B's one place
        #expect(await retryAfter { _ = try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeB) } == 1)
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeA),
                                hash: message, keyshare: keyshare))
        limiterB.endSigning(keyID: keyID)
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeB),
                                hash: message, keyshare: keyshare))
    }
}
