import CloudNode

/// Duo export's credentials: `backend` may export for the subject `app` (the operator's backend acts for
/// its user, session.md §9.2–9.3); `app` has the default scopes (everything but export); `other-backend`
/// may export, but for another subject; `bound-backend` may export for `app` from another device only.
struct BackendTokens: TokenVerifier {
    var name: String { "test-table" }
    func verify(token: String?) async throws(AuthenticationError) -> Principal {
        switch token {
        case "backend"?: return Principal(subject: "app", scopes: ["export"])
        case "other-backend"?: return Principal(subject: "mallory", scopes: ["export"])
        case "bound-backend"?: return Principal(subject: "app", scopes: ["export"], deviceBinding: [UInt8](repeating: 7, count: 33))
        case "app"?: return Principal(subject: "app")
        case nil: throw .missingToken
        default: throw .invalidToken
        }
    }
}
