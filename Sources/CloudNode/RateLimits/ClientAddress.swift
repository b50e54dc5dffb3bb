import Foundation

/// Which address a request counts against (`docs/protocol/session.md` §9.5 "per client address").
enum ClientAddress {
    /// Longest address kept (an IPv6 literal with a zone fits); longer text is cut to this.
    static let maximumLength = 64

    /// The TCP peer, unless it is a trusted proxy: then the rightmost `X-Forwarded-For` entry that is not
    /// itself a trusted proxy (entries to its left were written by the client and prove nothing).
    /// IPv4-mapped IPv6 addresses count as their IPv4 address.
    static func resolve(peer: String, forwardedFor: String?, trustedProxies: Set<String>) -> String {
        let peer = normalize(peer)
        guard trustedProxies.contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { normalize(String($0)) }.filter { !$0.isEmpty }
        guard let client = hops.last(where: { !trustedProxies.contains($0) }) ?? hops.first else { return peer }
        return client
    }

    private static func normalize(_ text: String) -> String {
        var address = Substring(text.trimmingCharacters(in: .whitespaces))
        if address.hasPrefix("::ffff:"), address.contains(".") { address = address.dropFirst("::ffff:".count) }
        return String(address.prefix(maximumLength)).lowercased()
    }
}
