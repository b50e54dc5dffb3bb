import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which address a request counts against (`docs/protocol/session.md` §9.5 "per client address").
enum ClientAddress {
    /// Longest address kept (an IPv6 literal with a zone fits); longer text is cut to this.
    static let maximumLength = 64
    /// Longest `X-Forwarded-For` a trusted proxy may send (bytes): a chain of some 40 hops. Longer is
    /// refused with 431 (second review finding 11).
    static let maximumForwardedForLength = 2048

    /// Why a trusted proxy's request names no client (second review finding 11): refused with
    /// ``httpStatus`` before anything is counted, never counted against the proxy itself.
    enum ForwardedForError: Error, Sendable, Equatable {
        /// No `X-Forwarded-For`, or nothing in it.
        case missing
        /// The client's entry is not an IP address.
        case malformed
        /// Longer than ``ClientAddress/maximumForwardedForLength``.
        case oversized

        /// 400 Bad Request, or 431 Request Header Fields Too Large.
        var httpStatus: Int { self == .oversized ? 431 : 400 }
    }

    /// The TCP peer, unless it is a trusted proxy: then the rightmost `X-Forwarded-For` entry that is not
    /// itself a trusted proxy (entries to its left were written by the client and prove nothing), which
    /// must be an IP address. IPv4-mapped IPv6 addresses count as their IPv4 address; an IPv6 address
    /// counts as its `/ipv6PrefixLength` network (``bucket(_:ipv6PrefixLength:)``).
    /// - Parameter forwardedForLength: the header's length as received (it may be longer than
    ///   `forwardedFor`, which a server copies into a bounded buffer).
    static func resolve(peer: String, forwardedFor: String?, forwardedForLength: Int? = nil, trustedProxies: Set<String>,
                        ipv6PrefixLength: Int = NodeRateLimits.defaultIPv6PrefixLength) throws(ForwardedForError) -> String {
        let peer = normalize(peer)
        guard trustedProxies.contains(peer) else { return bucket(peer, ipv6PrefixLength: ipv6PrefixLength) ?? peer }
        guard let forwardedFor else { throw .missing }
        guard max(forwardedForLength ?? 0, forwardedFor.utf8.count) <= maximumForwardedForLength else { throw .oversized }
        let hops = forwardedFor.split(separator: ",").map { normalize(String($0)) }.filter { !$0.isEmpty }
        guard let client = hops.last(where: { !trustedProxies.contains($0) }) ?? hops.first else { throw .missing }
        guard let counted = bucket(client, ipv6PrefixLength: ipv6PrefixLength) else { throw .malformed }
        return counted
    }

    /// What the limits count `address` as: an IPv4 address as itself; an IPv6 address as its network of
    /// `ipv6PrefixLength` bits (`2001:db8:1:2::/64`; 128: the address itself), since one host is
    /// commonly given a whole /64 (second review finding 10). Accepts `[v6]:port`, `v4:port` and a
    /// bucket it made (`…/64`, narrowed further if the prefix is shorter). nil: not an IP address.
    static func bucket(_ address: String, ipv6PrefixLength: Int = NodeRateLimits.defaultIPv6PrefixLength) -> String? {
        var text = Substring(address)
        var prefix = min(128, max(0, ipv6PrefixLength))
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = text[text.index(after: text.startIndex)..<close]
        } else if text.contains("."), text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]
        }
        if let slash = text.firstIndex(of: "/") {
            guard let given = Int(text[text.index(after: slash)...]), (0...128).contains(given) else { return nil }
            prefix = min(prefix, given)
            text = text[..<slash]
        }
        let literal = String(text)
        guard literal.count <= 45, !literal.contains("%") else { return nil }
        var v4 = [UInt8](repeating: 0, count: 4)
        if !literal.contains(":") {
            guard inet_pton(AF_INET, literal, &v4) == 1 else { return nil }
            return v4.map(String.init).joined(separator: ".")
        }
        var v6 = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        if v6[0..<10].allSatisfy({ $0 == 0 }), v6[10] == 0xFF, v6[11] == 0xFF {
            return v6[12...].map(String.init).joined(separator: ".")
        }
        for bit in prefix..<128 { v6[bit / 8] &= ~(UInt8(0x80) >> UInt8(bit % 8)) }
        var out = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        guard inet_ntop(AF_INET6, v6, &out, socklen_t(out.count)) != nil else { return nil }
        let canonical = String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return prefix == 128 ? canonical : canonical + "/\(prefix)"
    }

    private static func normalize(_ text: String) -> String {
        var address = Substring(text.trimmingCharacters(in: .whitespaces))
        if address.hasPrefix("::ffff:"), address.contains(".") { address = address.dropFirst("::ffff:".count) }
        return String(address.prefix(maximumLength)).lowercased()
    }
}
