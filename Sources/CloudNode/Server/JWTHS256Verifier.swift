import Foundation
import MPCCrypto

/// Accepts HS256 JWTs (RFC 7519) signed with a shared secret and carrying a numeric `exp` in the
/// future. Scopes come from the `scope` claim (space-separated) or a `scopes` array. Any other `alg` (including `none`) is refused; the MAC is compared in constant time.
package struct JWTHS256Verifier: TokenVerifier {
    private let secret: [UInt8]
    /// Allowed clock skew for `exp` and `nbf`.
    package var leeway: Duration
    private let now: @Sendable () -> Date
    /// When set, the `iss` claim must equal it.
    package let issuer: String?
    /// When set, the `aud` claim (a string or an array of strings) must contain it.
    package let audience: String?

    /// Reads the secret from `path` (the raw file bytes, one trailing newline removed).
    package init(secretFile path: String, leeway: Duration = .seconds(0), issuer: String? = nil,
                audience: String? = nil) throws(NodeServerError) {
        guard var data = FileManager.default.contents(atPath: path) else { throw .invalidConfiguration("JWT secret file unreadable") }
        if data.last == UInt8(ascii: "\n") { data.removeLast() }
        if data.last == UInt8(ascii: "\r") { data.removeLast() }
        try self.init(secret: [UInt8](data), leeway: leeway, issuer: issuer, audience: audience)
    }

    /// Uses `secret` (at least 32 bytes, as RFC 7518 §3.2 requires for HS256).
    package init(secret: [UInt8], leeway: Duration = .seconds(0), issuer: String? = nil, audience: String? = nil,
                now: @escaping @Sendable () -> Date = Date.init) throws(NodeServerError) {
        guard secret.count >= 32 else { throw .invalidConfiguration("JWT secret shorter than 32 bytes") }
        self.secret = secret
        self.leeway = leeway
        self.issuer = issuer
        self.audience = audience
        self.now = now
    }

    /// The longest subject accepted: longer ones are refused, never cut (two subjects sharing a prefix
    /// must not become one principal).
    package static let maximumSubjectByteCount = 128

    package var name: String { "jwt-hs256" }

    private struct Header: Decodable { var alg: String }

    package func verify(token: String?) async throws(AuthenticationError) -> Principal {
        guard let token else { throw .missingToken }
        guard token.utf8.count <= 8192 else { throw .invalidToken }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2])
        else { throw .invalidToken }
        guard let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)) else { throw .invalidToken }
        guard header.alg == "HS256" else { throw .unsupportedAlgorithm }
        let signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        guard constantTimeEqual(SHA256.hmac(key: secret, data: signingInput), signature) else { throw .invalidToken }
        guard let claims = (try? JSONSerialization.jsonObject(with: Data(payloadBytes))) as? [String: Any],
              let exp = (claims["exp"] as? NSNumber)?.doubleValue
        else { throw .invalidToken }
        let skew = Double(leeway.components.seconds)
        let current = now().timeIntervalSince1970
        guard current < exp + skew else { throw .expired }
        if let nbf = (claims["nbf"] as? NSNumber)?.doubleValue, current + skew < nbf { throw .invalidToken }
        // Security review finding 11: the subject names the key owner, so it must be there, a non-empty
        // string, and whole (no fallback subject that every token without `sub` would share).
        guard let subject = claims["sub"] as? String, !subject.isEmpty,
              subject.utf8.count <= Self.maximumSubjectByteCount
        else { throw .invalidToken }
        if let issuer, claims["iss"] as? String != issuer { throw .invalidToken }
        if let audience {
            let audiences = (claims["aud"] as? String).map { [$0] } ?? (claims["aud"] as? [String]) ?? []
            guard audiences.contains(audience) else { throw .invalidToken }
        }
        return Principal(subject: subject, scopes: try Self.scopes(claims), deviceBinding: try Self.deviceBinding(claims))
    }

    /// session.md §9.1 `device_binding`: hex of a device key identity (`type ‖ key`, 1–129 bytes); absent → nil.
    /// A claim of another shape refuses the token.
    static func deviceBinding(_ claims: [String: Any]) throws(AuthenticationError) -> [UInt8]? {
        guard let value = claims["device_binding"] else { return nil }
        guard let text = value as? String, text.utf8.count <= 258, let bytes = try? Hex.decode(text), !bytes.isEmpty
        else { throw .invalidToken }
        return bytes
    }

    /// session.md §9.1 scopes: the `scope` claim (space-separated string) or a `scopes` array of
    /// strings; neither → nil (the default). A claim of another shape refuses the token.
    static func scopes(_ claims: [String: Any]) throws(AuthenticationError) -> Set<String>? {
        if let value = claims["scope"] {
            guard let text = value as? String, text.utf8.count <= 1024 else { throw .invalidToken }
            return Principal.scopes(fromList: Substring(text))
        }
        if let value = claims["scopes"] {
            guard let items = value as? [String], items.count <= 64 else { throw .invalidToken }
            return Set(items)
        }
        return nil
    }
}

extension JWTHS256Verifier: CustomStringConvertible {
    package var description: String { "JWTHS256Verifier(<redacted>)" }
}
