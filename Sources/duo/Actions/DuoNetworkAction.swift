/// A ``NetworkAction`` addressed with duo routing: `/v3/{algorithm}/{action}` (`path` only feeds
/// the HTTP POST URL). The stock steps are the structs in ``DuoAction``.
public protocol DuoNetworkAction: NetworkAction {}

/// The stock duo steps: `DuoAction.ECDSA.Keygen()`, `DuoAction.EdDSA.Signature()`, … Each
/// initializer takes `path` / `action` / `protocol` / `algorithm`, every one defaulted.
public enum DuoAction {
    /// Steps of two-party ECDSA (DKLs23), `algorithm` = `ecdsa`.
    public enum ECDSA {}
    /// Steps of two-party EdDSA (FROST), `algorithm` = `eddsa`.
    public enum EdDSA {}
}

/// Wraps a plain ``NetworkAction`` handed to ``DuoNetworkClient/connect(action:params:)`` that is
/// not a ``DuoNetworkAction``, keeping its fields.
struct DuoRoutedAction: DuoNetworkAction {
    var path: String
    var action: String
    var `protocol`: String
    var algorithm: String

    init(_ other: NetworkAction) {
        path = other.path
        action = other.action
        self.protocol = other.protocol
        algorithm = other.algorithm
    }

    /// `other`'s route with another action.
    init(_ other: NetworkAction, action: String) {
        self.init(other)
        self.action = action
    }
}

extension DuoNetworkAction {
    /// The HTTP POST route segments after `/v3`: `path`, `eddsa` for EdDSA, `action`.
    var postRouteSegments: [String] {
        algorithm.lowercased() == "eddsa" ? [path, "eddsa", action] : [path, action]
    }
}
