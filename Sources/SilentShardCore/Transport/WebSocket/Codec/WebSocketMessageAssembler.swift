import Foundation

/// Turns decoded frames into messages and control events (RFC 6455 §5.4–5.5): reassembles
/// fragments, enforces the message size limit and UTF-8 on text and close reasons, and validates
/// close codes. A pure value, like ``WebSocketFrameDecoder``.
package struct WebSocketMessageAssembler: Sendable {
    /// What one frame produced.
    package enum Event: Equatable, Sendable {
        case message(WebSocketMessage)
        case ping([UInt8])
        case pong([UInt8])
        /// A close frame; `code` is nil when the frame had no payload (1005, "no status").
        case close(code: UInt16?, reason: String)
    }

    /// Largest message accepted (sum of its fragments).
    package let maximumMessageSize: Int
    private var fragments: [UInt8] = []
    private var fragmentedOpcode: WebSocketOpcode?

    package init(maximumMessageSize: Int) {
        self.maximumMessageSize = max(0, maximumMessageSize)
    }

    /// The event `frame` completes, if any.
    package mutating func consume(_ frame: WebSocketFrame) throws(WebSocketProtocolError) -> Event? {
        switch frame.opcode {
        case .ping:
            return .ping(frame.payload)
        case .pong:
            return .pong(frame.payload)
        case .close:
            return try Self.close(frame.payload)
        case .text, .binary:
            guard fragmentedOpcode == nil else { throw .protocolError }
            guard frame.payload.count <= maximumMessageSize else { throw .messageTooLarge }
            if frame.fin {
                return .message(try Self.message(frame.opcode, frame.payload))
            }
            fragmentedOpcode = frame.opcode
            fragments = frame.payload
            return nil
        case .continuation:
            guard let opcode = fragmentedOpcode else { throw .protocolError }
            guard frame.payload.count <= maximumMessageSize - fragments.count else { throw .messageTooLarge }
            fragments.append(contentsOf: frame.payload)
            guard frame.fin else { return nil }
            let payload = fragments
            fragments = []
            fragmentedOpcode = nil
            return .message(try Self.message(opcode, payload))
        }
    }

    private static func message(_ opcode: WebSocketOpcode, _ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard opcode == .text else { return .binary(Data(payload)) }
        guard let text = UTF8Validation.string(payload) else { throw .invalidUTF8 }
        return .text(text)
    }

    private static func close(_ payload: [UInt8]) throws(WebSocketProtocolError) -> Event {
        guard !payload.isEmpty else { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolError }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard isValidReceivedCloseCode(code) else { throw .protocolError }
        guard let reason = UTF8Validation.string(Array(payload[2...])) else { throw .invalidUTF8 }
        return .close(code: code, reason: reason)
    }

    /// Codes a peer may send (RFC 6455 §7.4 and the IANA registry): never 1004–1006 or 1015.
    package static func isValidReceivedCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
