import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// session.md §9.5 in the duo node runner: the app sees `rateLimited(retryAfter:)` with the node's REJECT
/// `retry_after_s`, and nothing else changes.
@Suite("Duo node runner: session.md §9.5 rate limits", .heavy, .timeLimit(.minutes(30)))
struct DuoRateLimitTests {
    private func error(_ body: () async throws -> Void) async -> SilentShardError? {
        do { try await body() } catch { return error as? SilentShardError }
        return nil
    }

    private func retryAfter(_ error: SilentShardError?) -> UInt32? {
        if case .rateLimited(let seconds) = error { return seconds }
        return nil
    }

    @Test("keygens past the principal's hourly count are RATE_LIMITED with the wait; signing goes on")
    func keyCreations() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa,
                                     rateLimiter: NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 2)))
        let first = try await fixture.session.keygen()
        _ = try await fixture.session.keygen()
        let refused = await error { _ = try await fixture.session.keygen() }
        #expect(retryAfter(refused).map { (61...3_600).contains($0) } == true, "\(String(describing: refused))")
        let message = Data(repeating: 0x07, count: 32)
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: first, message: message), hash: message, keyshare: first))
    }

    @Test("after the limit's failed device signatures, that device is RATE_LIMITED for the minute; another device is served")
    func deviceSignatures() async throws {
        let corrupt = LockedValue(false)
        let fixture = try DuoFixture(algorithm: .ecdsa, tamperSend: { index, data in
            guard index == 0, corrupt.withLock({ $0 }) else { return data }
            var bytes = [UInt8](data)
            bytes[bytes.count - 1] ^= 0x80   // the device signature of the SETUP
            return Data(bytes)
        }, rateLimiter: NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 2)))
        let keyshare = try await fixture.session.keygen()
        corrupt.withLock { $0 = true }
        for _ in 0..<2 {
            #expect(await error { _ = try await fixture.session.keygen() } == .authenticationFailed(reason: "device signature"))
        }
        corrupt.withLock { $0 = false }
        let message = Data(repeating: 0x08, count: 32)
        let refused = await error { _ = try await fixture.session.signature(keyshare: keyshare, message: message) }
        #expect(retryAfter(refused).map { (1...60).contains($0) } == true, "\(String(describing: refused))")
        let other = fixture.session(.ecdsa)
        let otherKeyshare = try await other.keygen()
        #expect(try verifyECDSA(try await other.signature(keyshare: otherKeyshare, message: message), hash: message,
                                keyshare: otherKeyshare))
    }

    @Test("a key at its concurrent-signing limit is RATE_LIMITED; finished signings give their place back")
    func signingSessions() async throws {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(signingSessionsPerKey: 1))
        let fixture = try DuoFixture(algorithm: .eddsa, rateLimiter: limiter)
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
}
