import Foundation
import MPCCrypto

/// Accepts exactly one token, read from a file (first line, surrounding whitespace trimmed).
/// Compares SHA-256 digests in constant time, so neither contents nor length leak through timing.
public struct StaticTokenVerifier: TokenVerifier {
    private let digest: [UInt8]

    /// Reads the token from `path`.
    /// - Throws: ``NodeServerError/invalidConfiguration(_:)`` if unreadable or empty.
    public init(contentsOf path: String) throws(NodeServerError) {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else { throw .invalidConfiguration("token file unreadable") }
        let token = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        try self.init(token: token)
    }

    /// Accepts `token`.
    public init(token: String) throws(NodeServerError) {
        guard !token.isEmpty else { throw .invalidConfiguration("token file empty") }
        digest = SHA256.hash(Array(token.utf8))
    }

    public var name: String { "token-file" }

    public func verify(token: String?) async throws(AuthenticationError) -> Principal {
        guard let token else { throw .missingToken }
        guard constantTimeEqual(SHA256.hash(Array(token.utf8)), digest) else { throw .invalidToken }
        return Principal(subject: "token-file")
    }
}

extension StaticTokenVerifier: CustomStringConvertible {
    public var description: String { "StaticTokenVerifier(<redacted>)" }
}
