import Foundation
import SilentShardTestSupport
import Testing
@testable import SilentShardCore

/// What the Python peer saw of the opening handshake (its first message).
struct PeerHello: Decodable, Equatable {
    var path: String
    var query: String
    var offered: [String]
    var selected: String?
}

extension WebSocketClientEngine {
    /// Connects to the peer's `/v3/test/echo` (or `segments`) in `mode`, returning its hello.
    @discardableResult
    func open(mode: String? = nil, segments: [String] = ["test", "echo"], subprotocol: String = "trio") async throws -> PeerHello {
        let url = try NetworkRoute.url(base: config.url, segments: segments, params: mode, websocket: true)
        try await connect(url: url, subprotocol: subprotocol)
        return try JSONDecoder().decode(PeerHello.self, from: try await read())
    }
}

func peerConfig(_ peer: PythonPeer, secure: Bool = false, token: String? = nil,
                readTimeout: Duration = .seconds(20), maximumMessageSize: Int = 16 << 20) -> WebsocketConfig {
    WebsocketConfig(url: secure ? peer.wss : peer.ws, authenticationToken: token, connectTimeout: .seconds(10),
                    readTimeout: readTimeout, maximumMessageSize: maximumMessageSize,
                    trustedRootCertificates: secure ? [peer.caCertificate] : [])
}

/// Runs `body` and returns the error it threw (nil if none).
func thrownError(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}
