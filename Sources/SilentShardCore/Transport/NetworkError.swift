/// A transport failure of the SDK's network clients. Cases never carry the authentication token or
/// message contents.
public enum NetworkError: Error, Sendable, Equatable {
    /// The configured URL (or the route built from it) is not a usable `ws`/`wss`/`http`/`https` URL.
    case invalidURL
    /// The host actively refused the TCP connection.
    case connectionRefused(host: String, port: Int)
    /// Name resolution or the TCP connection failed for another reason.
    case connectionFailed(reason: String)
    /// The TLS handshake failed, for example because the server's certificate did not verify.
    case tlsFailure(reason: String)
    /// The server answered the WebSocket upgrade with this HTTP status instead of `101`.
    case handshakeRejected(status: Int)
    /// The server did not select the offered subprotocol (`selected` is what it answered, if anything).
    case subprotocolMismatch(offered: String, selected: String?)
    /// The upgrade broke RFC 6455: the server's response (bad accept key, unoffered extension, …), or
    /// an extra request header the client may not send (`reason` "header NAME not allowed"; checked
    /// before anything is sent).
    case invalidHandshake(reason: String)
    /// The peer closed the WebSocket with this close code and reason.
    case closedByPeer(code: Int, reason: String)
    /// The connection ended without a closing handshake (reset, or end of stream).
    case connectionLost
    /// The peer violated RFC 6455; the connection was closed with `closeCode` (1002 or 1007).
    case protocolViolation(closeCode: Int)
    /// No connection, response or message arrived in time.
    case timeout
    /// A message exceeded `WebsocketConfig.maximumMessageSize` (`limit` bytes).
    case messageTooLarge(limit: Int)
    /// `send`/`read` was called while no channel is open.
    case notConnected
    /// An HTTP POST got a non-2xx response with this status.
    case httpStatus(Int)
    /// This transport has no HTTP POST path.
    case postRequestUnsupported
    /// The configured ``WebsocketConfig/tokenProvider`` threw; nothing was sent. `reason` is the
    /// thrown error's type name (never its message, which might quote a token).
    case tokenUnavailable(reason: String)
}
