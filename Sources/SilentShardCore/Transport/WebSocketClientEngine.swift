import Foundation

/// The shared body of `DuoNetworkClient` and `TrioNetworkClient`: holds at most one connection,
/// sends the token first, and releases everything on disconnect. Used by one step at a time (its
/// owners are not `Sendable`).
package final class WebSocketClientEngine {
    package let config: WebsocketConfig
    private var connection: (any WebSocketConnection)?

    package init(config: WebsocketConfig) {
        self.config = config
    }

    deinit {
        // A client dropped while connected must not leave its I/O thread and socket behind.
        if let connection {
            Task { await connection.close() }
        }
    }

    /// Opens a connection to `url` (closing a previous one first) with the extra upgrade `headers`
    /// (checked first: a bad one throws ``NetworkError/invalidHandshake(reason:)`` before anything is
    /// closed or sent) and sends the token, if any.
    nonisolated(nonsending) package func connect(url: URL, subprotocol: String, headers: [String: String] = [:]) async throws {
        let fields = try HTTPHeaderFields.validated(headers)
        await disconnect()
        var settings = WebSocketSettings(config)
        settings.headers = fields
        let opened = try await WebSocketTransport.connect(url: url, subprotocol: subprotocol, settings: settings)
        if let token = config.authenticationToken {
            do {
                try await opened.send(.text(token))
            } catch {
                await opened.close()
                throw error
            }
        }
        connection = opened
    }

    /// Sends one message on the open connection.
    nonisolated(nonsending) package func send(_ message: WebSocketMessage) async throws {
        guard let connection else { throw NetworkError.notConnected }
        try await connection.send(message)
    }

    /// The next message's bytes (UTF-8 for text messages).
    nonisolated(nonsending) package func read() async throws -> Data {
        guard let connection else { throw NetworkError.notConnected }
        return try await connection.receive().data
    }

    /// Closes and forgets the connection; a no-op when there is none.
    nonisolated(nonsending) package func disconnect() async {
        guard let current = connection else { return }
        connection = nil
        await current.close()
    }

    /// POSTs `body` to `url` with the token as `Authorization: Bearer …`.
    nonisolated(nonsending) package func post(url: URL, body: Data) async throws -> Data {
        try await WebSocketTransport.post(url: url, body: body, bearerToken: config.authenticationToken,
                                          settings: WebSocketSettings(config))
    }
}
