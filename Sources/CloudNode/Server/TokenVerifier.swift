import Foundation

/// Who a verified token belongs to. `subject` is an identifier safe to log (never the token).
public struct Principal: Sendable, Equatable {
    /// `anonymous` (no verification), `token-file`, the JWT `sub`, or what the hook returned.
    public var subject: String

    public init(subject: String) { self.subject = subject }
}

/// Why a token was refused. Cases never carry the token.
public enum AuthenticationError: Error, Sendable, Equatable {
    /// The verifier needs a token and the first message was binary (no token).
    case missingToken
    /// The token did not match or did not verify.
    case invalidToken
    /// A JWT past its `exp`.
    case expired
    /// A JWT whose header names another algorithm than HS256.
    case unsupportedAlgorithm
    /// The verification hook could not be reached or answered something else than 2xx.
    case hookUnavailable
}

/// Decides whether an app token (the first text message, or `Authorization: Bearer` on POST) is
/// acceptable. Called on the Swift side, never on the service thread.
public protocol TokenVerifier: Sendable {
    /// A name for the startup log (`none`, `token-file`, `jwt-hs256`, `hook`), never a secret.
    var name: String { get }
    /// `token` is nil when the first message was binary (session.md §2.1: binary = no token).
    func verify(token: String?) async throws(AuthenticationError) -> Principal
}

/// Dev only: accepts every connection, with or without a token. The node logs a loud warning.
public struct NoTokenVerifier: TokenVerifier {
    public init() {}
    public var name: String { "none" }
    public func verify(token: String?) async throws(AuthenticationError) -> Principal {
        Principal(subject: "anonymous")
    }
}
