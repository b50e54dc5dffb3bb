/// Encodes client frames (always masked, RFC 6455 §5.3).
package enum WebSocketFrameEncoder {
    /// One frame: header, masking key, masked payload.
    package static func frame(opcode: WebSocketOpcode, fin: Bool, payload: UnsafeRawBufferPointer, maskKey: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(payload.count + 14)
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let length = payload.count
        if length < 126 {
            out.append(0x80 | UInt8(length))
        } else if length <= 0xFFFF {
            out.append(0x80 | 126)
            out.append(UInt8(truncatingIfNeeded: length >> 8))
            out.append(UInt8(truncatingIfNeeded: length))
        } else {
            out.append(0x80 | 127)
            let wide = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: wide >> UInt64(shift)))
            }
        }
        for shift in [24, 16, 8, 0] {
            out.append(UInt8(truncatingIfNeeded: maskKey >> UInt32(shift)))
        }
        let headerCount = out.count
        out.append(contentsOf: payload)
        out.withUnsafeMutableBytes { all in
            WebSocketMasking.apply(key: maskKey, to: UnsafeMutableRawBufferPointer(rebasing: all[headerCount...]))
        }
        return out
    }

    /// The frames of one data message, split into fragments of at most `fragmentSize` bytes
    /// (at least one frame, even for an empty message).
    package static func message(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fragmentSize: Int,
        maskKey: () -> UInt32
    ) -> [[UInt8]] {
        let size = max(1, fragmentSize)
        var frames: [[UInt8]] = []
        var offset = 0
        repeat {
            let end = min(payload.count, offset + size)
            let chunk = UnsafeRawBufferPointer(rebasing: payload[offset..<end])
            frames.append(frame(opcode: frames.isEmpty ? opcode : .continuation, fin: end == payload.count,
                                payload: chunk, maskKey: maskKey()))
            offset = end
        } while offset < payload.count
        return frames
    }

    /// A close frame with `code` and a UTF-8 `reason` (truncated to fit 125 bytes).
    package static func close(code: UInt16, reason: String = "", maskKey: UInt32) -> [UInt8] {
        var payload: [UInt8] = [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)]
        payload.append(contentsOf: Array(reason.utf8).prefix(123))
        return payload.withUnsafeBytes { frame(opcode: .close, fin: true, payload: $0, maskKey: maskKey) }
    }
}
