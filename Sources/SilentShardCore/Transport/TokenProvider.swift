/// Why the default network clients ask a ``WebsocketConfig/tokenProvider`` for a token.
public enum TokenRequest: Sendable, Equatable {
    /// Before a step's connection or a POST: return a token that is valid now (a cached one is fine
    /// while it has not expired).
    case beforeStep
    /// The node refused the token the provider gave last as missing, invalid or expired (`AUTH_INVALID`,
    /// a WebSocket closed with 4401 before the SETUP, or HTTP 401 on a POST): return a freshly issued one. The SDK asks this at most once per step or POST and
    /// retries with the new token.
    case afterRefusal
}

/// Supplies the authentication token for each step (tokens often expire between a `preSignature` and
/// its `preSignatureFinal`). Return nil to send no token. A thrown error ends the step with
/// ``NetworkError/tokenUnavailable``; the SDK never logs or stores the token.
public typealias TokenProvider = @Sendable (TokenRequest) async throws -> String?

/// A network client whose token can be refreshed: the SDK's default clients (and their subclasses)
/// when their configuration has a `tokenProvider`. After a step was refused with `AUTH_INVALID` or 4401 the
/// app's step engine marks the token refused and retries the step once; the next connection asks the
/// provider for `.afterRefusal`.
package protocol TokenRefreshingClient: AnyObject {
    /// Whether a refused token can be replaced (a provider is configured).
    var canRefreshToken: Bool { get }
    /// The next connection asks the provider for a fresh token.
    func tokenWasRefused()
}
