import Foundation

/// The transport contract the SDK drives for every protocol step:
/// `connect` → `send`/`read` … → `disconnect`.
///
/// The SDK ships WebSocket implementations (`DuoNetworkClient` in `duo`, `TrioNetworkClient` in
/// `trio`); implement this protocol yourself to carry protocol traffic over another channel (an app
/// socket, a native bridge, Bluetooth LE, …). A client is used by one protocol step at a time and
/// must stay reusable for the next `connect` after `disconnect`.
///
/// Errors may be of any type; the SDK's own clients throw ``NetworkError`` values.
public protocol NetworkClient: AnyObject {
    /// Opens a channel for one step. `action` is the step the routing selected; `params` is optional
    /// detail such as a hex key id.
    nonisolated(nonsending) func connect(action: NetworkAction, params: String?) async throws
    /// Sends one binary message to the peer.
    nonisolated(nonsending) func send(bytes: Data) async throws
    /// Sends one text message to the peer.
    nonisolated(nonsending) func send(text: String) async throws
    /// Suspends until the next message from the peer arrives and returns its bytes.
    nonisolated(nonsending) func read() async throws -> Data
    /// Closes the channel. The client stays reusable for the next `connect`.
    nonisolated(nonsending) func disconnect() async throws
    /// Sends one request-response exchange over HTTP POST to the action's route and returns the
    /// response body. Trio pre-signatures finalize over this path (`preSignFinal`).
    nonisolated(nonsending) func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data
}

extension NetworkClient {
    /// The default: this transport has no request-response path.
    /// - Throws: ``NetworkError/postRequestUnsupported``.
    nonisolated(nonsending) public func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        throw NetworkError.postRequestUnsupported
    }
}
