import Foundation

/// What the default clients need from a WebSocket: one per connection, platform-specific
/// (`URLSessionWebSocketTask` on Apple platforms, an RFC 6455 client over POSIX sockets and
/// OpenSSL elsewhere). Thread-safe; closing releases every resource (thread, socket, session).
package protocol WebSocketConnection: AnyObject, Sendable {
    /// Sends one message; returns when it was handed to the operating system.
    func send(_ message: WebSocketMessage) async throws
    /// The next message; throws ``NetworkError`` when the connection ended, or `.timeout`.
    func receive() async throws -> WebSocketMessage
    /// Closes with code 1000 (waiting a bounded time for the peer's close) and releases resources.
    func close() async
}

/// Limits a connection applies, taken from ``WebsocketConfig``.
package struct WebSocketSettings: Sendable {
    package var connectTimeout: Duration
    package var readTimeout: Duration
    package var closeTimeout: Duration
    package var maximumMessageSize: Int
    package var trustedRootCertificates: [Data]
    /// Extra upgrade-request fields, already checked by ``HTTPHeaderFields/validated(_:)``.
    package var headers: [(name: String, value: String)] = []

    package init(_ config: WebsocketConfig) {
        connectTimeout = config.connectTimeout
        readTimeout = config.readTimeout
        closeTimeout = min(config.connectTimeout, .seconds(5))
        maximumMessageSize = config.maximumMessageSize
        trustedRootCertificates = config.trustedRootCertificates
    }
}

/// Opens connections and POSTs with the platform's engine; the choice is invisible to callers.
package enum WebSocketTransport {
    /// Opens a WebSocket to `url`, offering `subprotocol` (none when empty) and requiring the
    /// server to select it.
    package static func connect(url: URL, subprotocol: String, settings: WebSocketSettings) async throws -> any WebSocketConnection {
        let endpoint = try NetworkEndpoint(url)
        #if canImport(Darwin)
        return try await URLSessionWebSocketConnection.open(endpoint: endpoint, subprotocol: subprotocol, settings: settings)
        #else
        return try await POSIXWebSocketConnection.open(endpoint: endpoint, subprotocol: subprotocol, settings: settings)
        #endif
    }

    /// POSTs `body` to `url` (`Content-Type: application/octet-stream`, optional bearer token) and
    /// returns the body of a 2xx response; other statuses throw ``NetworkError/httpStatus(_:)``. A token
    /// that is not an RFC 6750 b64token (`BearerToken`) is refused before anything is sent
    /// (``NetworkError/invalidHandshake(reason:)``, "header Authorization not allowed").
    package static func post(url: URL, body: Data, bearerToken: String?, settings: WebSocketSettings) async throws -> Data {
        if let bearerToken, !BearerToken.isWellFormed(bearerToken) { throw HTTPHeaderFields.notAllowed("Authorization") }
        let endpoint = try NetworkEndpoint(url)
        #if canImport(Darwin)
        return try await URLSessionHTTPPost.post(endpoint: endpoint, body: body, bearerToken: bearerToken, settings: settings)
        #else
        return try await POSIXHTTPPost.post(endpoint: endpoint, body: body, bearerToken: bearerToken, settings: settings)
        #endif
    }
}
