/// Incremental decoder of server-to-client frames (RFC 6455 §5.2): bytes in, frames out.
///
/// A pure value: no I/O, no clocks, so it can be unit-tested and fuzzed. Rejects what a client must
/// reject: masked frames, reserved bits (no extension is ever negotiated), unknown opcodes, fragmented
/// or oversized control frames, 64-bit lengths with the top bit set, and any frame payload over
/// `maximumPayload` (before buffering it).
package struct WebSocketFrameDecoder: Sendable {
    /// Largest payload accepted in one frame.
    package let maximumPayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    package init(maximumPayload: Int) {
        self.maximumPayload = max(0, maximumPayload)
    }

    /// Bytes received but not yet returned as frames.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete frame, or nil when more bytes are needed.
    package mutating func nextFrame() throws(WebSocketProtocolError) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        guard first & 0x70 == 0 else { throw .protocolError }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { throw .protocolError }
        let fin = first & 0x80 != 0
        guard second & 0x80 == 0 else { throw .protocolError }  // servers must not mask
        let shortLength = Int(second & 0x7F)
        if opcode.isControl {
            guard fin, shortLength <= 125 else { throw .protocolError }
        }
        var headerLength = 2
        var payloadLength: UInt64
        switch shortLength {
        case 126:
            headerLength = 4
            guard available >= headerLength else { return nil }
            payloadLength = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
        case 127:
            headerLength = 10
            guard available >= headerLength else { return nil }
            payloadLength = 0
            for index in 2..<10 {
                payloadLength = payloadLength << 8 | UInt64(buffer[start + index])
            }
            guard payloadLength >> 63 == 0 else { throw .protocolError }
        default:
            payloadLength = UInt64(shortLength)
        }
        guard payloadLength <= UInt64(maximumPayload) else { throw .messageTooLarge }
        let length = Int(payloadLength)
        guard available - headerLength >= length else {
            buffer.reserveCapacity(start + headerLength + length)
            return nil
        }
        let payloadStart = start + headerLength
        let payload = Array(buffer[payloadStart..<(payloadStart + length)])
        start = payloadStart + length
        return WebSocketFrame(fin: fin, opcode: opcode, payload: payload)
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            start = 0
        } else if start > 0 && start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
    }
}
