/// How one protocol step is addressed: the route, the WebSocket subprotocol and the algorithm.
///
/// The SDK hands the step's action to ``NetworkClient/connect(action:params:)``. The default
/// clients build their URL from it (duo: `/v3/{algorithm}/{action}`; trio: `/v3/{path}/{action}`,
/// EdDSA `/v3/{path}/eddsa/{action}`) and offer ``protocol`` as `Sec-WebSocket-Protocol`. A custom
/// transport may use the fields however it likes.
public protocol NetworkAction: Sendable {
    /// Trio: the first route segment (`trio`). Duo: only used for the HTTP POST URL.
    var path: String { get }
    /// The last route segment, for example `keygen`.
    var action: String { get }
    /// The WebSocket subprotocol offered on connect (`Sec-WebSocket-Protocol`).
    var `protocol`: String { get }
    /// `ecdsa` or `eddsa`.
    var algorithm: String { get }
}
