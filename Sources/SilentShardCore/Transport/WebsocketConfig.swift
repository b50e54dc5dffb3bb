import Foundation

/// What the default WebSocket clients need to reach the cloud: the server URL, an optional
/// authentication token, timeouts, the maximum message size and, optionally, the root certificates
/// to trust instead of the system's.
///
/// The token is never included in `description`, `debugDescription` or mirrors.
public struct WebsocketConfig: Sendable {
    /// The server, for example `wss://your-server.example.com` (`ws`, `wss`, `http` or `https`;
    /// a path prefix is kept in front of `/v3/...`).
    public var url: String
    /// Sent as the first (text) message of every connection, and as `Authorization: Bearer …` on
    /// HTTP POST, when set and no `tokenProvider` is.
    public var authenticationToken: String?
    /// Asked for the token before every connection and POST, instead of `authenticationToken`; asked
    /// again with `.afterRefusal` (once) when a node refuses its token as invalid or expired, and the
    /// step or POST is retried with the new token. A refused step changed nothing at any node, so the
    /// retry is safe for every operation.
    public var tokenProvider: TokenProvider?
    /// Limit for opening a connection: TCP, TLS and the WebSocket upgrade (or the POST's connect).
    public var connectTimeout: Duration
    /// How long `read()` waits for the next message, a POST for its response, and a send for the
    /// peer to accept its bytes (a send that times out drops the connection: it cannot resume
    /// mid-message). A read that times out leaves the connection usable.
    public var readTimeout: Duration
    /// Largest message accepted or sent, in bytes; larger incoming messages close the connection
    /// with code 1009 and fail with ``NetworkError/messageTooLarge(limit:)``.
    public var maximumMessageSize: Int
    /// How long one protocol step may wait for the nodes at the app: once `stepTimeout` has passed since
    /// the step began, its pending connect or read is cancelled and the step ends with
    /// `SilentShardError.timeout`, aborting as the commit protocol allows (ABORT before COMMIT; in doubt
    /// after it). nil for no limit. Sends, storage writes and a `BackupSink` are not interrupted, and a
    /// custom `NetworkClient` whose `read` ignores task cancellation delays the timeout until it returns.
    /// Sessions over an app's own `NetworkClient` use the default unless it conforms to
    /// ``StepTimeoutConfigurable``. Cancelling the operation's task ends the step the same way with
    /// `cancelled`.
    public var stepTimeout: Duration? = WebsocketConfig.defaultStepTimeout
    /// DER-encoded root certificates to trust for `wss`/`https`. Empty (the default): the system's
    /// trust store. Non-empty: only these roots (the host name is verified either way).
    public var trustedRootCertificates: [Data]

    /// The default step deadline: 120 s (a trio ECDSA keygen takes a fraction of a second; this bounds a
    /// step whose node went silent without closing).
    public static let defaultStepTimeout: Duration? = .seconds(120)

    /// The default maximum message size: 16 MiB (MPC bundles are at most 1 MiB; Apple's and Python
    /// `websockets`' defaults of 1 MiB are too tight).
    public static let defaultMaximumMessageSize = 16 << 20

    /// Creates a configuration. Only `url` is required.
    public init(
        url: String,
        authenticationToken: String? = nil,
        connectTimeout: Duration = .seconds(15),
        readTimeout: Duration = .seconds(60),
        maximumMessageSize: Int = WebsocketConfig.defaultMaximumMessageSize,
        trustedRootCertificates: [Data] = []
    ) {
        self.url = url
        self.authenticationToken = authenticationToken
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.maximumMessageSize = maximumMessageSize
        self.trustedRootCertificates = trustedRootCertificates
    }

    /// Creates a configuration whose token comes from `tokenProvider` before every step (see
    /// ``tokenProvider``).
    public init(
        url: String,
        tokenProvider: @escaping TokenProvider,
        connectTimeout: Duration = .seconds(15),
        readTimeout: Duration = .seconds(60),
        maximumMessageSize: Int = WebsocketConfig.defaultMaximumMessageSize,
        trustedRootCertificates: [Data] = []
    ) {
        self.init(url: url, authenticationToken: nil, connectTimeout: connectTimeout, readTimeout: readTimeout,
                  maximumMessageSize: maximumMessageSize, trustedRootCertificates: trustedRootCertificates)
        self.tokenProvider = tokenProvider
    }
}

extension WebsocketConfig: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A description without the token.
    public var description: String {
        "WebsocketConfig(url: \(url), authenticationToken: \(authenticationToken == nil ? "nil" : "<redacted>"), "
            + "tokenProvider: \(tokenProvider == nil ? "nil" : "set"), "
            + "connectTimeout: \(connectTimeout), readTimeout: \(readTimeout), "
            + "maximumMessageSize: \(maximumMessageSize), stepTimeout: \(stepTimeout.map { "\($0)" } ?? "nil"), "
            + "trustedRootCertificates: \(trustedRootCertificates.count))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the token.
    public var customMirror: Mirror {
        Mirror(self, children: [
            "url": url,
            "authenticationToken": authenticationToken == nil ? "nil" : "<redacted>",
            "tokenProvider": tokenProvider == nil ? "nil" : "set",
            "connectTimeout": connectTimeout,
            "readTimeout": readTimeout,
            "maximumMessageSize": maximumMessageSize,
            "stepTimeout": stepTimeout.map { "\($0)" } ?? "nil",
            "trustedRootCertificates": trustedRootCertificates.count,
        ])
    }
}
