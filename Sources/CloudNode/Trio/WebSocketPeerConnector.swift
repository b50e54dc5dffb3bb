import Foundation
import SilentShardCore

/// Node A's link to node B over a WebSocket to B's `/v3/peer` (subprotocol `silentshard-peer`,
/// session.md §2.3). Use `wss://` with `trustedRootCertificates` in production (the link adds
/// access control; TLS authenticates B's server).
package struct WebSocketPeerConnector: TrioPeerConnector {
    /// B's base URL, e.g. `ws://127.0.0.1:9091`.
    package let baseURL: String
    /// Timeouts, message size and TLS trust for the link (the URL and token fields are unused).
    package let config: WebsocketConfig

    package init(baseURL: String, config: WebsocketConfig? = nil) {
        self.baseURL = baseURL
        self.config = config ?? WebsocketConfig(url: baseURL)
    }

    package func openLink() async throws -> any NodeStepConnection {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + "/v3/peer") else { throw NetworkError.invalidURL }
        let connection = try await WebSocketTransport.connect(url: url, subprotocol: NodeMode.peer.subprotocol,
                                                              settings: WebSocketSettings(config))
        return PeerLinkConnection(connection: connection)
    }
}

/// One open link as a ``NodeStepConnection`` (binary messages only).
struct PeerLinkConnection: NodeStepConnection {
    let connection: any WebSocketConnection

    func read() async throws -> Data {
        switch try await connection.receive() {
        case .binary(let data): return data
        case .text: throw NetworkError.protocolViolation(closeCode: 1002)
        }
    }

    func send(_ data: Data) async throws { try await connection.send(.binary(data)) }

    func close(code: UInt16, reason: String) async { await connection.close() }
}
