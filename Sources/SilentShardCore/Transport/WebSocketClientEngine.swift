import Foundation
import MPCCrypto

/// The shared body of `DuoNetworkClient` and `TrioNetworkClient`: holds at most one connection,
/// sends the token first, and releases everything on disconnect. Used by one step at a time (its
/// owners are not `Sendable`).
package final class WebSocketClientEngine {
    package let config: WebsocketConfig
    private var connection: (any WebSocketConnection)?
    /// The node refused the provider's last token: the next connection asks for a fresh one. Locked: a
    /// POST (outside the session's step gate) and a step may use the client at the same time.
    private let tokenRefused = LockedValue(false)

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
        let token = try await currentToken()
        let opened = try await WebSocketTransport.connect(url: url, subprotocol: subprotocol, settings: settings)
        if let token {
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

    /// Starts closing the connection and forgets it; a no-op when there is none. The closing handshake (our
    /// close frame, the node's answer, or the close deadline) runs on without the caller: awaiting the node's
    /// close frame put one more round trip after every step (`silentshard bench --rtt`), although everything
    /// the step needed was already sent and received. The connection's thread and socket end with the handshake.
    nonisolated(nonsending) package func disconnect() async {
        guard let current = connection else { return }
        connection = nil
        Task.detached { await current.close() }
    }

    /// POSTs `body` to `url` with the token as `Authorization: Bearer …`. With a token provider, an HTTP
    /// 401 is retried once with a fresh token (the node changed nothing for a refused POST).
    nonisolated(nonsending) package func post(url: URL, body: Data) async throws -> Data {
        do {
            return try await postOnce(url: url, body: body)
        } catch NetworkError.httpStatus(401) where canRefreshToken {
            tokenWasRefused()
            return try await postOnce(url: url, body: body)
        }
    }

    nonisolated(nonsending) private func postOnce(url: URL, body: Data) async throws -> Data {
        try await WebSocketTransport.post(url: url, body: body, bearerToken: try await currentToken(), settings: WebSocketSettings(config))
    }

    /// Whether a refused token can be replaced: a provider is configured.
    package var canRefreshToken: Bool { config.tokenProvider != nil }

    /// The next connection or POST asks the provider for `.afterRefusal`.
    package func tokenWasRefused() { tokenRefused.withLock { $0 = true } }

    /// The token for the next connection or POST: the provider's (`.afterRefusal` once after a refusal),
    /// else the configured one.
    nonisolated(nonsending) private func currentToken() async throws -> String? {
        guard let provider = config.tokenProvider else { return config.authenticationToken }
        let refused = tokenRefused.withLock { value in
            defer { value = false }
            return value
        }
        do {
            return try await provider(refused ? .afterRefusal : .beforeStep)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw NetworkError.tokenUnavailable(reason: String(describing: type(of: error)))
        }
    }
}
