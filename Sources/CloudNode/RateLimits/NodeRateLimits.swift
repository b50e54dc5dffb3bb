import Foundation

/// The node's abuse limits (`docs/protocol/session.md` §9.5). A limit of 0 is off. The defaults are the spec's;
/// ``off`` is for development, benchmarks and tests that make many keys from one principal.
///
/// Without a store, counts are per node process (in memory): a cluster of N processes behind a load
/// balancer would admit up to N times each limit. With one (``NodeRateLimiter/cluster``), failed
/// authentications, key creations and failed device signatures are counted in the node database by every
/// process (session.md §9.5, proposal P5); open connections and signing sessions stay per process. The
/// share-changing lease (one per key) and the presignature quota (100 per key) are enforced by the store,
/// cluster-wide, and are not configured here.
package struct NodeRateLimits: Sendable, Equatable {
    /// Open WebSocket connections per client address (64). Inter-node links (`/v3/peer`) are not counted.
    package var connectionsPerAddress: Int
    /// Failed authentications (token refused) per client address per minute (10); the next one blocks it.
    package var failedAuthenticationsPerMinute: Int
    /// How long an address that reached ``failedAuthenticationsPerMinute`` is refused (10 min).
    package var blockSeconds: Int
    /// Keygens, imports and hard derivations (each creates a key) a principal may start per hour (10).
    package var keyCreationsPerPrincipalPerHour: Int
    /// Concurrent signing and presigning sessions per key (8).
    package var signingSessionsPerKey: Int
    /// Failed device signatures per device key per minute (5): after them, SETUPs of that device are
    /// refused until the oldest failure is a minute old. Counted per (principal, device key), so a
    /// client with a token of its own cannot lock another principal's device out.
    package var failedDeviceSignaturesPerMinute: Int
    /// Refused requests per principal and per client address per minute (20), across device keys and request
    /// kinds: failed device signatures of any device key, refused preSignFinal / PRESIG_QUERY POSTs and
    /// refused duo export POSTs (security review 2, findings 4 and 7). After them, every request of that
    /// principal or address is RATE_LIMITED until the oldest failure is a minute old.
    package var failedRequestsPerMinute: Int
    /// Addresses of reverse proxies whose `X-Forwarded-For` the node believes (exact textual match of
    /// the TCP peer, e.g. `127.0.0.1`). Empty: the TCP peer is the client. Behind a proxy that is not
    /// listed, every client shares the proxy's address and its per-address limits.
    package var trustedProxies: Set<String>
    /// The IPv6 network every per-address limit counts as one client (64: a /64, what one host or
    /// one subscriber is commonly given; 128: each address). IPv4 addresses count one by one. Second
    /// review finding 10: counted per /128, one host could use 2⁶⁴ addresses.
    package var ipv6PrefixLength: Int

    /// The default ``ipv6PrefixLength``.
    package static let defaultIPv6PrefixLength = 64

    package init(connectionsPerAddress: Int = 64, failedAuthenticationsPerMinute: Int = 10, blockSeconds: Int = 600,
                keyCreationsPerPrincipalPerHour: Int = 10, signingSessionsPerKey: Int = 8,
                failedDeviceSignaturesPerMinute: Int = 5, failedRequestsPerMinute: Int = 20,
                trustedProxies: Set<String> = [], ipv6PrefixLength: Int = NodeRateLimits.defaultIPv6PrefixLength) {
        self.connectionsPerAddress = connectionsPerAddress
        self.failedAuthenticationsPerMinute = failedAuthenticationsPerMinute
        self.blockSeconds = blockSeconds
        self.keyCreationsPerPrincipalPerHour = keyCreationsPerPrincipalPerHour
        self.signingSessionsPerKey = signingSessionsPerKey
        self.failedDeviceSignaturesPerMinute = failedDeviceSignaturesPerMinute
        self.failedRequestsPerMinute = failedRequestsPerMinute
        self.trustedProxies = trustedProxies
        self.ipv6PrefixLength = ipv6PrefixLength
    }

    /// The spec's defaults (session.md §9.5).
    package static let standard = NodeRateLimits()

    /// Every limit off.
    package static let off = NodeRateLimits(connectionsPerAddress: 0, failedAuthenticationsPerMinute: 0, blockSeconds: 0,
                                           keyCreationsPerPrincipalPerHour: 0, signingSessionsPerKey: 0,
                                           failedDeviceSignaturesPerMinute: 0, failedRequestsPerMinute: 0)

    /// The names ``init(parsing:)`` accepts.
    package static let settingNames = ["auth-failures-per-minute", "block-seconds", "connections-per-address",
                                      "device-failures-per-minute", "ipv6-prefix", "key-creations-per-hour",
                                      "request-failures-per-minute",
                                      "signing-sessions-per-key"]

    /// One line for the startup log: `standard`, `off`, or every value by name (and the trusted proxies).
    package var summary: String {
        var limits = self
        limits.trustedProxies = []
        let proxies = trustedProxies.isEmpty ? "" : " (trusted proxies " + trustedProxies.sorted().joined(separator: ",") + ")"
        if limits == .standard { return "standard" + proxies }
        if limits == .off { return "off" + proxies }
        let values = [connectionsPerAddress, failedAuthenticationsPerMinute, blockSeconds, keyCreationsPerPrincipalPerHour,
                      signingSessionsPerKey, failedDeviceSignaturesPerMinute, failedRequestsPerMinute, ipv6PrefixLength]
        let named = ["connections-per-address", "auth-failures-per-minute", "block-seconds", "key-creations-per-hour",
                     "signing-sessions-per-key", "device-failures-per-minute", "request-failures-per-minute", "ipv6-prefix"]
        return zip(named, values).map { "\($0)=\($1)" }.joined(separator: ",") + proxies
    }

    /// Sets the limit called `name`; false for an unknown name.
    private mutating func set(_ name: String, to value: Int) -> Bool {
        switch name {
        case "connections-per-address": connectionsPerAddress = value
        case "auth-failures-per-minute": failedAuthenticationsPerMinute = value
        case "block-seconds": blockSeconds = value
        case "key-creations-per-hour": keyCreationsPerPrincipalPerHour = value
        case "signing-sessions-per-key": signingSessionsPerKey = value
        case "device-failures-per-minute": failedDeviceSignaturesPerMinute = value
        case "ipv6-prefix": ipv6PrefixLength = value
        case "request-failures-per-minute": failedRequestsPerMinute = value
        default: return false
        }
        return true
    }

    /// Parses `standard`, `off`, or comma-separated `name=value` overrides of the standard limits
    /// (e.g. `key-creations-per-hour=100,signing-sessions-per-key=16`; 0 turns one off).
    package init(parsing text: String) throws(NodeRateLimitsError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch trimmed {
        case "standard", "": self = .standard
        case "off": self = .off
        default:
            var limits = NodeRateLimits.standard
            for item in trimmed.split(separator: ",") {
                let parts = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, Self.settingNames.contains(parts[0]) else {
                    throw .unknownSetting(String(item.prefix(64)))
                }
                guard let value = Int(parts[1]), value >= 0, value <= 1_000_000_000,
                      parts[0] != "ipv6-prefix" || (1...128).contains(value) else {
                    throw .invalidValue(parts[0])
                }
                _ = limits.set(parts[0], to: value)
            }
            self = limits
        }
    }
}

/// A `--rate-limits` value that could not be parsed.
package enum NodeRateLimitsError: Error, Sendable, Equatable, CustomStringConvertible {
    case unknownSetting(String)
    case invalidValue(String)

    package var description: String {
        switch self {
        case .unknownSetting(let item):
            "unknown rate limit '\(item)' (standard, off, or NAME=N with NAME one of "
                + NodeRateLimits.settingNames.joined(separator: ", ") + ")"
        case .invalidValue(let name):
            name == "ipv6-prefix" ? "rate limit ipv6-prefix needs a prefix length from 1 to 128"
                : "rate limit \(name) needs a whole number ≥ 0"
        }
    }
}
