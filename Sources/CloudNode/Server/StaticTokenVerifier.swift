import Foundation
import MPCCrypto

/// Accepts exactly one token, read from a file (first line, surrounding whitespace trimmed; an
/// optional later line `scope: export sign …` grants scopes, session.md §9.1).
/// Compares SHA-256 digests in constant time, so neither contents nor length leak through timing.
package struct StaticTokenVerifier: TokenVerifier {
    private let digest: [UInt8]
    private let scopes: Set<String>?

    /// Reads the token from `path`.
    /// - Throws: ``NodeServerError/invalidConfiguration(_:)`` if unreadable or empty.
    package init(contentsOf path: String) throws(NodeServerError) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw .invalidConfiguration("token file unreadable") }
        let lines = text.split(whereSeparator: \.isNewline)
        let token = lines.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        let scopeLine = lines.dropFirst().first { $0.hasPrefix("scope:") }
        try self.init(token: token, scopes: scopeLine.flatMap { Principal.scopes(fromList: $0.dropFirst("scope:".count)) })
    }

    /// Accepts `token`, granting `scopes` (nil: the default, every operation except export).
    package init(token: String, scopes: Set<String>? = nil) throws(NodeServerError) {
        guard !token.isEmpty else { throw .invalidConfiguration("token file empty") }
        digest = SHA256.hash(Array(token.utf8))
        self.scopes = scopes
    }

    package var name: String { "token-file" }

    package func verify(token: String?) async throws(AuthenticationError) -> Principal {
        guard let token else { throw .missingToken }
        guard constantTimeEqual(SHA256.hash(Array(token.utf8)), digest) else { throw .invalidToken }
        return Principal(subject: "token-file", scopes: scopes, identifiesSubject: false)
    }
}

extension StaticTokenVerifier: CustomStringConvertible {
    package var description: String { "StaticTokenVerifier(<redacted>)" }
}
