/// RFC 6455 §5.2 opcodes this client understands; every other value is a protocol error.
package enum WebSocketOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong (opcodes ≥ 0x8).
    package var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One decoded frame, payload already unmasked.
package struct WebSocketFrame: Equatable, Sendable {
    package var fin: Bool
    package var opcode: WebSocketOpcode
    package var payload: [UInt8]

    package init(fin: Bool, opcode: WebSocketOpcode, payload: [UInt8]) {
        self.fin = fin
        self.opcode = opcode
        self.payload = payload
    }
}

/// A violation found while decoding, with the close code RFC 6455 §7.4.1 assigns to it.
package enum WebSocketProtocolError: Error, Equatable, Sendable {
    /// Malformed framing, reserved bits or opcodes, bad control frames, bad close codes (1002).
    case protocolError
    /// A text message or close reason that is not UTF-8 (1007).
    case invalidUTF8
    /// A frame or message over the configured limit (1009).
    case messageTooLarge

    /// The close code to send before closing the connection.
    package var closeCode: UInt16 {
        switch self {
        case .protocolError: 1002
        case .invalidUTF8: 1007
        case .messageTooLarge: 1009
        }
    }
}
