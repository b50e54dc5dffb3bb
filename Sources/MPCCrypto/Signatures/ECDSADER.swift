/// Strict DER for ECDSA signatures: `SEQUENCE { INTEGER r, INTEGER s }` with r, s of at most 32 bytes (P-256).
/// Portable Swift, so every backend shares one codec. Decoding accepts only the canonical (minimal) encoding:
/// no BER length forms, no needless leading zero, no negative integer, nothing after the sequence.
enum ECDSADER {
    /// r and s, 32 bytes each, big-endian.
    static func decode(_ der: [UInt8]) throws(CryptoError) -> (r: [UInt8], s: [UInt8]) {
        // 0x30 len (0x02 lenR r) (0x02 lenS s); every length < 0x80 here (at most 2 + 33 + 2 + 33 = 70).
        guard der.count >= 8, der.count <= 72, der[0] == 0x30, Int(der[1]) == der.count - 2 else {
            throw .invalidSignatureEncoding
        }
        var offset = 2
        func integer() throws(CryptoError) -> [UInt8] {
            guard offset + 2 <= der.count, der[offset] == 0x02 else { throw .invalidSignatureEncoding }
            let length = Int(der[offset + 1])
            offset += 2
            guard length >= 1, length <= 33, offset + length <= der.count else { throw .invalidSignatureEncoding }
            let bytes = Array(der[offset..<(offset + length)])
            offset += length
            // Non-negative, minimal: a leading 0x00 only when the next byte has its top bit set.
            guard bytes[0] & 0x80 == 0 else { throw .invalidSignatureEncoding }
            if bytes.count > 1, bytes[0] == 0, bytes[1] & 0x80 == 0 { throw .invalidSignatureEncoding }
            let magnitude = bytes.first == 0 && bytes.count > 1 ? Array(bytes.dropFirst()) : bytes
            guard magnitude.count <= 32 else { throw .invalidSignatureEncoding }
            return [UInt8](repeating: 0, count: 32 - magnitude.count) + magnitude
        }
        let r = try integer()
        let s = try integer()
        guard offset == der.count else { throw .invalidSignatureEncoding }
        return (r, s)
    }

    /// The canonical DER of r ‖ s (32-byte big-endian each).
    static func encode(r: [UInt8], s: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard r.count <= 32, s.count <= 32 else { throw .invalidSignatureEncoding }
        func integer(_ value: [UInt8]) -> [UInt8] {
            var bytes = Array(value.drop { $0 == 0 })
            if bytes.isEmpty { bytes = [0] }
            if bytes[0] & 0x80 != 0 { bytes.insert(0, at: 0) }
            return [0x02, UInt8(bytes.count)] + bytes
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }
}
