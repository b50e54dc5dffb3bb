/// How each duo step is addressed: one ``NetworkAction`` per operation. The action it supplies is
/// exactly what the client's `connect` receives. Use the built-in `.ecdsa` / `.eddsa`, or implement
/// it to route steps yourself.
public protocol DuoNetworkActionProvider: Sendable {
    /// Where a keygen step goes.
    var keygen: NetworkAction { get }
    /// Where a reconcile step goes (settling a share change in doubt).
    var reconcile: NetworkAction { get }
    /// Where a key refresh step goes.
    var refresh: NetworkAction { get }
    /// Where a signing step goes.
    var sign: NetworkAction { get }
    /// Where an import step goes (an existing private key shared out).
    var `import`: NetworkAction { get }
    /// Presigning (protocol v2; optional: the default routes it like `sign` with action `presign`).
    var preSign: NetworkAction { get }
    /// Finishing a presignature over HTTP POST (optional: the default routes it like `sign` with action
    /// `presign-final`).
    var preSignFinal: NetworkAction { get }
}

extension DuoNetworkActionProvider {
    /// `sign`'s path, protocol and algorithm with action `presign`, so a provider written before duo
    /// presignatures existed still routes them.
    public var preSign: NetworkAction { DuoRoutedAction(sign, action: "presign") }
    /// `sign`'s path, protocol and algorithm with action `presign-final` (an HTTP POST).
    public var preSignFinal: NetworkAction { DuoRoutedAction(sign, action: "presign-final") }
}

/// The stock ECDSA routing (`/v3/ecdsa/{action}`, subprotocol `duo-instance`). Use it as `.ecdsa`.
public struct DuoECDSANetworkActions: DuoNetworkActionProvider {
    /// The stock ECDSA routing.
    public init() {}
    public var keygen: NetworkAction { DuoAction.ECDSA.Keygen() }
    public var reconcile: NetworkAction { DuoAction.ECDSA.Reconcile() }
    public var refresh: NetworkAction { DuoAction.ECDSA.KeyRefresh() }
    public var sign: NetworkAction { DuoAction.ECDSA.Signature() }
    public var `import`: NetworkAction { DuoAction.ECDSA.Import() }
    public var preSign: NetworkAction { DuoAction.ECDSA.PreSignature() }
    public var preSignFinal: NetworkAction { DuoAction.ECDSA.PreSignatureFinal() }
}

/// The stock EdDSA routing (`/v3/eddsa/{action}`, subprotocol `duo-instance`). Use it as `.eddsa`.
public struct DuoEdDSANetworkActions: DuoNetworkActionProvider {
    /// The stock EdDSA routing.
    public init() {}
    public var keygen: NetworkAction { DuoAction.EdDSA.Keygen() }
    public var reconcile: NetworkAction { DuoAction.EdDSA.Reconcile() }
    public var refresh: NetworkAction { DuoAction.EdDSA.KeyRefresh() }
    public var sign: NetworkAction { DuoAction.EdDSA.Signature() }
    public var `import`: NetworkAction { DuoAction.EdDSA.Import() }
    public var preSign: NetworkAction { DuoAction.EdDSA.PreSignature() }
    public var preSignFinal: NetworkAction { DuoAction.EdDSA.PreSignatureFinal() }
}

extension DuoNetworkActionProvider where Self == DuoECDSANetworkActions {
    /// The stock ECDSA routing.
    public static var ecdsa: DuoECDSANetworkActions { DuoECDSANetworkActions() }
}

extension DuoNetworkActionProvider where Self == DuoEdDSANetworkActions {
    /// The stock EdDSA routing.
    public static var eddsa: DuoEdDSANetworkActions { DuoEdDSANetworkActions() }
}
