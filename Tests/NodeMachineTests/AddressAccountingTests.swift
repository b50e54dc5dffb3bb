@testable import CloudNode
import MPCCrypto
import SilentShardTestSupport
import Testing

/// Second review finding 10: per-address limits counted IPv6 per /128 (one host holds 2⁶⁴ of them),
/// stopped counting new clients past 100,000 tracked ones (a flood of addresses switched limiting
/// off), and swept every tracked client in one O(n) pass on the server's service thread.
@Suite("Finding 10: per-address accounting (IPv6 prefixes, the cap, the sweep)")
struct AddressAccountingTests {
    @Test func finding10_twoAddressesInOneSlash64ShareABucket() throws {
        let first = try ClientAddress.resolve(peer: "2001:db8:1:2::1", forwardedFor: nil, trustedProxies: [])
        let second = try ClientAddress.resolve(peer: "2001:db8:1:2:ffff:eeee:dddd:9", forwardedFor: nil, trustedProxies: [])
        let elsewhere = try ClientAddress.resolve(peer: "2001:db8:1:3::1", forwardedFor: nil, trustedProxies: [])
        #expect(first == "2001:db8:1:2::/64")
        #expect(first == second)
        #expect(first != elsewhere)
        // The limits count the bucket: the second address is refused once the first holds the place.
        let limiter = NodeRateLimiter(limits: NodeRateLimits(connectionsPerAddress: 1))
        #expect(limiter.openConnection(from: first) == .allowed)
        #expect(limiter.openConnection(from: second) == .limited(retryAfter: 1))
        #expect(limiter.openConnection(from: elsewhere) == .allowed)
    }

    @Test func finding10_pastTheCapANewAddressIsStillLimited() {
        let clock = ManualClock(milliseconds: 1_000_000)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 2, blockSeconds: 600), clock: clock.read)
        // A flood: one failure from each of as many addresses as the limiter tracks.
        for index in 0..<NodeRateLimiter.maximumTrackedClients {
            limiter.authenticationFailed(from: "flood-\(index)")
        }
        // A new client past the cap is still counted, and blocked at its limit.
        limiter.authenticationFailed(from: "198.51.100.7")
        limiter.authenticationFailed(from: "198.51.100.7")
        #expect(limiter.checkAddress("198.51.100.7") == .limited(retryAfter: 600))
        #expect(limiter.trackedEntries <= NodeRateLimiter.maximumTrackedClients + 1)
    }

    @Test("the prefix is configurable (ipv6-prefix); IPv4 counts per address; forwarded addresses are bucketed too")
    func ipv6PrefixIsConfigurable() throws {
        #expect(try ClientAddress.resolve(peer: "2001:db8:1:2::1", forwardedFor: nil, trustedProxies: [], ipv6PrefixLength: 128)
            == "2001:db8:1:2::1")
        #expect(try ClientAddress.resolve(peer: "2001:db8:1:2::1", forwardedFor: nil, trustedProxies: [], ipv6PrefixLength: 48)
            == "2001:db8:1::/48")
        #expect(try ClientAddress.resolve(peer: "::1", forwardedFor: "2001:db8:1:2:3:4:5:6", trustedProxies: ["::1"])
            == "2001:db8:1:2::/64")
        #expect(try ClientAddress.resolve(peer: "198.51.100.7", forwardedFor: nil, trustedProxies: []) == "198.51.100.7")
        // A bucket made elsewhere (node A's, in LINK_OPEN) is narrowed to this node's prefix, never widened.
        #expect(ClientAddress.bucket("2001:db8:1:2::/64", ipv6PrefixLength: 48) == "2001:db8:1::/48")
        #expect(ClientAddress.bucket("2001:db8:1::/48", ipv6PrefixLength: 64) == "2001:db8:1::/48")
        #expect(ClientAddress.bucket("not-an-address") == nil)
        #expect(ClientAddress.bucket("2001:db8::/129") == nil)
        let limits = try NodeRateLimits(parsing: "ipv6-prefix=56")
        #expect(limits.ipv6PrefixLength == 56 && limits.summary.contains("ipv6-prefix=56"))
        #expect(NodeRateLimits.standard.ipv6PrefixLength == 64)
        for bad in ["ipv6-prefix=0", "ipv6-prefix=129"] {
            #expect(throws: NodeRateLimitsError.invalidValue("ipv6-prefix")) { try NodeRateLimits(parsing: bad) }
        }
    }

    /// The sweep's cost, counted (not timed): with 100,000 clients tracked, a call looks at a handful of
    /// entries at the least recently seen end, never at all of them, and forgets a passed window there.
    @Test func finding10_sweepLooksAtTheOldestEndOnly() {
        var map = RecencyMap<UInt64>(capacity: 100_000)
        for index in 0..<100_000 { map.set("client-\(index)", UInt64(index), now: UInt64(index)) }
        // Nothing expired: one entry looked at.
        map.removeOldest(limit: NodeRateLimiter.sweepBatch) { value, _ in value < 0 }
        #expect(map.examined == 1 && map.count == 100_000)
        // The 20 oldest expired: a batch per call, each call looking at its batch and one more at most.
        map.removeOldest(limit: NodeRateLimiter.sweepBatch) { value, _ in value < 20 }
        #expect(map.examined == 1 + NodeRateLimiter.sweepBatch && map.count == 100_000 - NodeRateLimiter.sweepBatch)
        map.removeOldest(limit: 100) { value, _ in value < 20 }
        #expect(map.examined == 1 + 20 + 1 && map.count == 100_000 - 20)
        #expect(map["client-19"] == nil && map["client-20"] == 20)
        // Touching moves an entry to the newest end: at the cap a new key evicts the least recently seen.
        map.set("client-20", 20, now: 200_000)
        for index in 0..<21 { map.set("new-\(index)", 0, now: 200_001) }
        #expect(map.count == 100_000 && map["client-20"] == 20 && map["client-21"] == nil && map["client-22"] == 22)
    }

    @Test("the limiter forgets passed windows as it goes, without a full pass")
    func limiterForgetsPassedWindows() {
        let clock = ManualClock(milliseconds: 1_000_000)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 5), clock: clock.read)
        for index in 0..<100 { limiter.authenticationFailed(from: "10.0.0.\(index)") }
        #expect(limiter.trackedEntries == 100)
        clock.advance(seconds: 61)
        // Each later call forgets a batch of passed windows from the oldest end.
        for index in 0..<20 { limiter.authenticationFailed(from: "10.1.0.\(index)") }
        #expect(limiter.trackedEntries == 20)
    }
}
