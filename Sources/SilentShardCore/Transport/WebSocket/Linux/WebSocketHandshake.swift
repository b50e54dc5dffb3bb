#if !canImport(Darwin)
internal import COpenSSL
import Foundation

/// The client side of the RFC 6455 §4 opening handshake: the upgrade request and the checks on
/// the server's answer. Offers no extension; offers `subprotocol` unless it is empty.
package struct WebSocketHandshake: Sendable {
    package let endpoint: NetworkEndpoint
    package let subprotocol: String
    /// `Sec-WebSocket-Key`: 16 random bytes, base64.
    package let key: String
    /// Extra fields (checked by ``HTTPHeaderFields/validated(_:)``), sent after the client's own.
    package let headers: [(name: String, value: String)]

    package init(endpoint: NetworkEndpoint, subprotocol: String, key: String? = nil,
                 headers: [(name: String, value: String)] = []) {
        self.endpoint = endpoint
        self.subprotocol = subprotocol
        self.headers = headers
        if let key {
            self.key = key
        } else {
            var generator = SystemRandomNumberGenerator()
            self.key = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }).base64EncodedString()
        }
    }

    /// The upgrade request.
    package var request: [UInt8] {
        var text = "GET \(endpoint.target) HTTP/1.1\r\n"
        text += "Host: \(endpoint.hostHeader)\r\n"
        text += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        if !subprotocol.isEmpty { text += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        text += "User-Agent: SilentShard/\(SilentShard.version)\r\n"
        for field in headers { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// `Sec-WebSocket-Accept` the server must answer: base64(SHA-1(key + GUID)).
    package var expectedAccept: String {
        let input = Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        _ = SHA1(input, input.count, &digest)
        return Data(digest).base64EncodedString()
    }

    /// Checks the server's answer.
    package func validate(_ head: HTTPResponseHead) throws(NetworkError) {
        guard head.status == 101 else { throw .handshakeRejected(status: head.status) }
        guard head.values("Upgrade").count == 1, head.values("Upgrade").first?.lowercased() == "websocket" else {
            throw .invalidHandshake(reason: "missing Upgrade: websocket")
        }
        let connectionTokens = head.values("Connection").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard connectionTokens.contains("upgrade") else { throw .invalidHandshake(reason: "missing Connection: Upgrade") }
        guard head.values("Sec-WebSocket-Accept") == [expectedAccept] else {
            throw .invalidHandshake(reason: "wrong Sec-WebSocket-Accept")
        }
        guard head.values("Sec-WebSocket-Extensions").allSatisfy({ $0.isEmpty }) else {
            throw .invalidHandshake(reason: "extension not offered")
        }
        let selected = head.values("Sec-WebSocket-Protocol")
        if subprotocol.isEmpty {
            guard selected.isEmpty else { throw .subprotocolMismatch(offered: subprotocol, selected: selected.first) }
        } else {
            guard selected == [subprotocol] else {
                throw .subprotocolMismatch(offered: subprotocol, selected: selected.first)
            }
        }
    }
}
#endif
