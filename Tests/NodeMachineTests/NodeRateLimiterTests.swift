@testable import CloudNode
import MPCCrypto
import SilentShardTestSupport
import Testing


@Suite("session.md §9.5 rate limits: the limiter's counting, with a manual clock", .timeLimit(.minutes(30)))
struct NodeRateLimiterTests {
    @Test("connections per address: the limit's next one waits; a close frees a place; addresses are separate")
    func connectionsPerAddress() {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(connectionsPerAddress: 2))
        #expect(limiter.openConnection(from: "10.0.0.1") == .allowed)
        #expect(limiter.openConnection(from: "10.0.0.1") == .allowed)
        #expect(limiter.openConnection(from: "10.0.0.1") == .limited(retryAfter: 1))
        #expect(limiter.openConnection(from: "10.0.0.2") == .allowed)
        limiter.connectionClosed(from: "10.0.0.1")
        #expect(limiter.openConnection(from: "10.0.0.1") == .allowed)
        // Closing more than was opened never goes negative.
        for _ in 0..<5 { limiter.connectionClosed(from: "10.0.0.2") }
        #expect(limiter.openConnection(from: "10.0.0.2") == .allowed)
        #expect(limiter.openConnection(from: "10.0.0.2") == .allowed)
        #expect(limiter.openConnection(from: "10.0.0.2") == .limited(retryAfter: 1))
    }

    @Test("failed authentications: the limit's one within a minute blocks the address for the block time")
    func failedAuthenticationsBlock() {
        let clock = ManualClock(milliseconds: 1_000_000)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 3, blockSeconds: 600), clock: clock.read)
        // Failures spread over more than a minute never block.
        for _ in 0..<6 {
            limiter.authenticationFailed(from: "a")
            clock.advance(seconds: 31)
        }
        #expect(limiter.checkAddress("a") == .allowed)
        // Three within a minute do (after the last spread one has left the minute).
        clock.advance(seconds: 61)
        for _ in 0..<3 { limiter.authenticationFailed(from: "a"); clock.advance(seconds: 1) }
        #expect(limiter.checkAddress("a") == .limited(retryAfter: 599))
        #expect(limiter.openConnection(from: "a") == .limited(retryAfter: 599))
        #expect(limiter.checkAddress("b") == .allowed)
        clock.advance(seconds: 598.5)
        #expect(limiter.checkAddress("a") == .limited(retryAfter: 1))
        clock.advance(seconds: 1)
        #expect(limiter.checkAddress("a") == .allowed)
        #expect(limiter.openConnection(from: "a") == .allowed)
    }

    @Test("key creations per principal per hour, with the wait until the oldest leaves the hour")
    func keyCreations() {
        let clock = ManualClock(milliseconds: 1_000_000)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 2), clock: clock.read)
        #expect(limiter.startKeyCreation(principal: "alice") == .allowed)
        clock.advance(seconds: 600)
        #expect(limiter.startKeyCreation(principal: "alice") == .allowed)
        #expect(limiter.startKeyCreation(principal: "alice") == .limited(retryAfter: 3000))
        #expect(limiter.startKeyCreation(principal: "bob") == .allowed)
        clock.advance(seconds: 3000)
        #expect(limiter.startKeyCreation(principal: "alice") == .allowed)
        #expect(limiter.startKeyCreation(principal: "alice") == .limited(retryAfter: 600))
    }

    @Test("signing sessions per key: held until ended; keys are separate")
    func signingSessions() {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(signingSessionsPerKey: 2))
        #expect(limiter.startSigning(keyID: "k1") == .allowed)
        #expect(limiter.startSigning(keyID: "k1") == .allowed)
        #expect(limiter.startSigning(keyID: "k1") == .limited(retryAfter: 1))
        #expect(limiter.startSigning(keyID: "k2") == .allowed)
        limiter.endSigning(keyID: "k1")
        #expect(limiter.startSigning(keyID: "k1") == .allowed)
    }

    @Test("failed device signatures: per (principal, device key), for a minute after the limit's one")
    func deviceSignatures() {
        let clock = ManualClock(milliseconds: 1_000_000)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 2), clock: clock.read)
        let device: [UInt8] = [1] + [UInt8](repeating: 7, count: 32)
        limiter.deviceSignatureFailed(device, principal: "p")
        #expect(limiter.checkDevice(device, principal: "p") == .allowed)
        clock.advance(seconds: 10)
        limiter.deviceSignatureFailed(device, principal: "p")
        #expect(limiter.checkDevice(device, principal: "p") == .limited(retryAfter: 50))
        // Another principal naming the same device key is not locked out by p's failures.
        #expect(limiter.checkDevice(device, principal: "q") == .allowed)
        clock.advance(seconds: 50)
        #expect(limiter.checkDevice(device, principal: "p") == .allowed)
    }

    @Test("off: nothing is ever limited")
    func off() {
        let limiter = NodeRateLimiter(limits: .off)
        for _ in 0..<200 {
            #expect(limiter.openConnection(from: "a") == .allowed)
            limiter.authenticationFailed(from: "a")
            #expect(limiter.startKeyCreation(principal: "p") == .allowed)
            #expect(limiter.startSigning(keyID: "k") == .allowed)
            limiter.deviceSignatureFailed([1, 2], principal: "p")
        }
        #expect(limiter.checkAddress("a") == .allowed)
        #expect(limiter.checkDevice([1, 2], principal: "p") == .allowed)
    }

    @Test("memory follows recent activity: windows and blocks that passed are swept, a batch per call")
    func sweep() {
        let clock = ManualClock(milliseconds: 1_000_000)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 2, blockSeconds: 60,
                                                             keyCreationsPerPrincipalPerHour: 5,
                                                             failedDeviceSignaturesPerMinute: 3), clock: clock.read)
        for index in 0..<5_000 {
            limiter.authenticationFailed(from: "addr-\(index)")
            limiter.authenticationFailed(from: "addr-\(index % 100)")
            limiter.deviceSignatureFailed([UInt8(index % 256), UInt8(index / 256)], principal: "p")
        }
        _ = limiter.startKeyCreation(principal: "p")
        #expect(limiter.trackedEntries > 5_000)
        clock.advance(seconds: 120)
        // Each call forgets a batch of passed entries per limit (finding 10: no O(n) pass on the service
        // thread), so as many calls as there are batches leave only the hour-long key creation.
        func calls(_ count: Int) {
            for _ in 0..<count {
                _ = limiter.openConnection(from: "x")
                limiter.connectionClosed(from: "x")
            }
        }
        calls(5_100 / NodeRateLimiter.sweepBatch + 1)
        #expect(limiter.trackedEntries == 1)
        clock.advance(seconds: 3_600)
        calls(1)
        #expect(limiter.trackedEntries == 0)
    }

    @Test("parsing --rate-limits: standard, off, overrides; unknown names and bad numbers are typed errors")
    func parsing() throws {
        #expect(try NodeRateLimits(parsing: "standard") == .standard)
        #expect(try NodeRateLimits(parsing: "off") == .off)
        let custom = try NodeRateLimits(parsing: "key-creations-per-hour=100, signing-sessions-per-key=0")
        #expect(custom.keyCreationsPerPrincipalPerHour == 100 && custom.signingSessionsPerKey == 0)
        #expect(custom.connectionsPerAddress == 64 && custom.failedDeviceSignaturesPerMinute == 5)
        #expect(custom.summary.contains("key-creations-per-hour=100"))
        #expect(NodeRateLimits.standard.summary == "standard")
        #expect(throws: NodeRateLimitsError.unknownSetting("launches=3")) { try NodeRateLimits(parsing: "launches=3") }
        #expect(throws: NodeRateLimitsError.invalidValue("block-seconds")) { try NodeRateLimits(parsing: "block-seconds=-1") }
        #expect(throws: NodeRateLimitsError.invalidValue("block-seconds")) { try NodeRateLimits(parsing: "block-seconds=ten") }
    }

    @Test("client address: X-Forwarded-For only from a trusted proxy, its rightmost untrusted hop")
    func clientAddress() throws {
        let trusted: Set<String> = ["127.0.0.1", "10.0.0.5"]
        #expect(try ClientAddress.resolve(peer: "192.0.2.7", forwardedFor: "203.0.113.9", trustedProxies: trusted) == "192.0.2.7")
        #expect(try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: "203.0.113.9", trustedProxies: trusted) == "203.0.113.9")
        // A client's own X-Forwarded-For entries (left) do not move it off its real address.
        #expect(try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: "1.1.1.1, 203.0.113.9, 10.0.0.5",
                                          trustedProxies: trusted) == "203.0.113.9")
        #expect(try ClientAddress.resolve(peer: "::ffff:127.0.0.1", forwardedFor: "2001:DB8::1", trustedProxies: trusted)
            == "2001:db8::/64")
        #expect(try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: "[2001:db8::1]:443, 198.51.100.1:8080",
                                          trustedProxies: trusted) == "198.51.100.1")
        // Finding 11: a trusted proxy that names no usable client is refused, never counted as itself.
        #expect(throws: ClientAddress.ForwardedForError.missing) {
            try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: nil, trustedProxies: trusted)
        }
        #expect(throws: ClientAddress.ForwardedForError.missing) {
            try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: " , ", trustedProxies: trusted)
        }
        #expect(throws: ClientAddress.ForwardedForError.malformed) {
            try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: String(repeating: "9", count: 500), trustedProxies: trusted)
        }
        #expect(throws: ClientAddress.ForwardedForError.oversized) {
            try ClientAddress.resolve(peer: "127.0.0.1", forwardedFor: "203.0.113.9", forwardedForLength: 9000,
                                      trustedProxies: trusted)
        }
        #expect(ClientAddress.ForwardedForError.oversized.httpStatus == 431 && ClientAddress.ForwardedForError.missing.httpStatus == 400)
    }
}
