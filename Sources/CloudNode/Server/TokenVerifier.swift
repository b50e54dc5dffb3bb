import Foundation
import SilentShardCore

/// Who a verified token belongs to. `subject` is an identifier safe to log (never the token).
package struct Principal: Sendable, Equatable {
    /// `anonymous` (no verification), `token-file`, the JWT `sub`, or what the hook returned.
    package var subject: String
    /// The operations the token allows (session.md §9.1), by route action name (`keygen`, `sign`,
    /// `export`, …); nil = the default: every operation except duo export.
    package var scopes: Set<String>?
    /// The device key the token is bound to (JWT claim `device_binding`: hex of the device key identity
    /// `type ‖ key`, as `DeviceKey.identity`), or nil. With a binding, a node requires SETUP's device key
    /// to equal it (session.md §9.1); a trio recover with a new device key needs it (session.md §9.3).
    package var deviceBinding: [UInt8]?
    /// Whether `subject` names one principal. False for a name every client of the verifier shares
    /// (`anonymous` under `--auth none`, `token-file`, a hook's fallback `hook`).
    package var identifiesSubject: Bool
    /// What the session.md §9.5 limits count this principal's failed device signatures and key creations under: the
    /// subject, or — for a shared subject — the client's address, which the server sets (security review
    /// finding 10: a shared subject let anyone lock another client's device out).
    package var rateLimitKey: String

    package init(subject: String, scopes: Set<String>? = nil, deviceBinding: [UInt8]? = nil, identifiesSubject: Bool = true) {
        self.subject = subject
        self.scopes = scopes
        self.deviceBinding = deviceBinding
        self.identifiesSubject = identifiesSubject
        rateLimitKey = subject
    }

    /// This principal as the limits count it for a client at `address`.
    func counted(at address: String) -> Principal {
        guard !identifiesSubject else { return self }
        var copy = self
        copy.rateLimitKey = "address " + address
        return copy
    }

    /// The scope of the duo export POST (never granted by default, session.md §9.1).
    package static let exportScope = SessionOperation.export.name

    /// Whether the token allows `scope`.
    package func allows(_ scope: String) -> Bool {
        scopes.map { $0.contains(scope) } ?? (scope != Self.exportScope)
    }

    /// Whether the token names `scope` explicitly (not by the default).
    package func grantsExplicitly(_ scope: String) -> Bool {
        scopes?.contains(scope) ?? false
    }

    /// Scopes from a space-separated list (OAuth `scope`); empty → nil (the default).
    package static func scopes(fromList text: Substring) -> Set<String>? {
        let items = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        return items.isEmpty ? nil : Set(items)
    }
}

/// Why a token was refused. Cases never carry the token.
package enum AuthenticationError: Error, Sendable, Equatable {
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
package protocol TokenVerifier: Sendable {
    /// A name for the startup log (`none`, `token-file`, `jwt-hs256`, `hook`), never a secret.
    var name: String { get }
    /// `token` is nil when the first message was binary (session.md §2.1: binary = no token).
    func verify(token: String?) async throws(AuthenticationError) -> Principal
    /// Whether a connection without a token is accepted (`--auth none`). When false (the default), the
    /// node reads at most one message of at most the token limit before the verifier accepted it.
    var acceptsMissingToken: Bool { get }
}

extension TokenVerifier {
    package var acceptsMissingToken: Bool { false }
}

/// Dev only: accepts every connection, with or without a token. The node logs a loud warning.
package struct NoTokenVerifier: TokenVerifier {
    /// The one subject every client gets.
    package static let subject = "anonymous"
    package init() {}
    package var name: String { "none" }
    package var acceptsMissingToken: Bool { true }
    package func verify(token: String?) async throws(AuthenticationError) -> Principal {
        Principal(subject: Self.subject, identifiesSubject: false)
    }
}
