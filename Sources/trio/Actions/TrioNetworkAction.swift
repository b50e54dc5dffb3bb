/// A ``NetworkAction`` addressed with trio routing: `/v3/{path}/{action}`, EdDSA
/// `/v3/{path}/eddsa/{action}`. The stock steps are the structs in ``TrioAction``.
public protocol TrioNetworkAction: NetworkAction {}

/// The stock trio steps: `TrioAction.ECDSA.Keygen()`, `TrioAction.EdDSA.Signature()`, … Each
/// initializer takes `path` / `action` / `protocol` / `algorithm`, every one defaulted.
public enum TrioAction {
    /// Steps of threshold ECDSA (DKLs23), `algorithm` = `ecdsa`.
    public enum ECDSA {}
    /// Steps of threshold EdDSA (FROST), `algorithm` = `eddsa`; no hard derivation.
    public enum EdDSA {}
}

/// Wraps a plain ``NetworkAction`` handed to ``TrioNetworkClient/connect(action:params:)`` that is
/// not a ``TrioNetworkAction``, keeping its fields.
struct TrioRoutedAction: TrioNetworkAction {
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
}

extension TrioNetworkAction {
    /// `["trio", "keygen"]` or `["trio", "eddsa", "keygen"]`: the segments after `/v3`.
    var trioRouteSegments: [String] {
        algorithm.lowercased() == "eddsa" ? [path, "eddsa", action] : [path, action]
    }
}
