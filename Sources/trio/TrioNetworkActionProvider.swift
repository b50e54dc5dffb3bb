/// How each trio step is addressed: one ``NetworkAction`` per operation. The action it supplies is
/// exactly what the client's `connect` receives. Use the built-in `.ecdsa` / `.eddsa`, or implement
/// it to route steps yourself.
public protocol TrioNetworkActionProvider: Sendable {
    /// Where a keygen step goes.
    var keygen: NetworkAction { get }
    /// Where a reconcile step goes (settling a share change in doubt).
    var reconcile: NetworkAction { get }
    /// Where a key refresh step goes.
    var refresh: NetworkAction { get }
    /// ECDSA only. Has a default (`TrioAction.ECDSA.HardDerivation()`), so EdDSA providers need not
    /// declare it; EdDSA sessions never use it.
    var hardDerivation: NetworkAction { get }
    /// Where a signing step goes.
    var sign: NetworkAction { get }
    /// Runs over the WebSocket.
    var preSign: NetworkAction { get }
    /// Runs over HTTP POST (`sendPostRequest`).
    var preSignFinal: NetworkAction { get }
    /// Where a recovery step goes (nodes A and B re-share to all three parties).
    var recover: NetworkAction { get }
    /// Where an export step goes.
    var export: NetworkAction { get }
    /// Where an import step goes (an existing private key shared out).
    var `import`: NetworkAction { get }
}

extension TrioNetworkActionProvider {
    /// The default for providers without hard derivation (EdDSA): the stock ECDSA action.
    public var hardDerivation: NetworkAction { TrioAction.ECDSA.HardDerivation() }
}

/// The stock ECDSA routing (`/v3/trio/{action}`, subprotocol `trio`). Use it as `.ecdsa`.
public struct TrioECDSANetworkActions: TrioNetworkActionProvider {
    /// The stock ECDSA routing.
    public init() {}
    public var keygen: NetworkAction { TrioAction.ECDSA.Keygen() }
    public var reconcile: NetworkAction { TrioAction.ECDSA.Reconcile() }
    public var refresh: NetworkAction { TrioAction.ECDSA.KeyRefresh() }
    public var hardDerivation: NetworkAction { TrioAction.ECDSA.HardDerivation() }
    public var sign: NetworkAction { TrioAction.ECDSA.Signature() }
    public var preSign: NetworkAction { TrioAction.ECDSA.PreSignature() }
    public var preSignFinal: NetworkAction { TrioAction.ECDSA.PreSignatureFinal() }
    public var recover: NetworkAction { TrioAction.ECDSA.Recovery() }
    public var export: NetworkAction { TrioAction.ECDSA.Export() }
    public var `import`: NetworkAction { TrioAction.ECDSA.Import() }
}

/// The stock EdDSA routing (`/v3/trio/eddsa/{action}`, subprotocol `trio`). Use it as `.eddsa`.
public struct TrioEdDSANetworkActions: TrioNetworkActionProvider {
    /// The stock EdDSA routing.
    public init() {}
    public var keygen: NetworkAction { TrioAction.EdDSA.Keygen() }
    public var reconcile: NetworkAction { TrioAction.EdDSA.Reconcile() }
    public var refresh: NetworkAction { TrioAction.EdDSA.KeyRefresh() }
    public var sign: NetworkAction { TrioAction.EdDSA.Signature() }
    public var preSign: NetworkAction { TrioAction.EdDSA.PreSignature() }
    public var preSignFinal: NetworkAction { TrioAction.EdDSA.PreSignatureFinal() }
    public var recover: NetworkAction { TrioAction.EdDSA.Recovery() }
    public var export: NetworkAction { TrioAction.EdDSA.Export() }
    public var `import`: NetworkAction { TrioAction.EdDSA.Import() }
}

extension TrioNetworkActionProvider where Self == TrioECDSANetworkActions {
    /// The stock ECDSA routing.
    public static var ecdsa: TrioECDSANetworkActions { TrioECDSANetworkActions() }
}

extension TrioNetworkActionProvider where Self == TrioEdDSANetworkActions {
    /// The stock EdDSA routing.
    public static var eddsa: TrioEdDSANetworkActions { TrioEdDSANetworkActions() }
}
