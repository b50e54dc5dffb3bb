/// RFC 6455 §5.3 masking: XOR with the 4-byte key, repeating (its own inverse).
package enum WebSocketMasking {
    /// Masks `buffer` in place with `key` (bytes in wire order).
    package static func apply(key: UInt32, to buffer: UnsafeMutableRawBufferPointer) {
        let keyBytes: [UInt8] = [UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16),
                                 UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key)]
        let pattern = keyBytes + keyBytes
        let word = pattern.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        let count = buffer.count
        var offset = 0
        while offset + 8 <= count {
            let value = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            buffer.storeBytes(of: value ^ word, toByteOffset: offset, as: UInt64.self)
            offset += 8
        }
        while offset < count {
            buffer[offset] ^= keyBytes[offset & 3]
            offset += 1
        }
    }
}
