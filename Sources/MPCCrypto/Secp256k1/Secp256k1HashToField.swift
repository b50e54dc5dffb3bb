extension Secp256k1 {
    /// RFC 9380 §5.3.1 `expand_message_xmd` with SHA-256 (b = 32, block size 64 bytes).
    ///
    /// `length` must be in 1…8160 (ell = ⌈length/32⌉ ≤ 255) and `dst` at most 255 bytes; both are
    /// protocol constants, so a violation is a programming error reported as `invalidLength`.
    /// Runs in time independent of the message contents (SHA-256 and XOR only).
    public static func expandMessageXMD(_ message: [UInt8], dst: [UInt8], length: Int) throws(CryptoError) -> [UInt8] {
        let ell = (length + 31) / 32
        guard length >= 1, ell <= 255, length <= 65535 else { throw .invalidLength(expected: 8160, actual: length) }
        guard dst.count <= 255 else { throw .invalidLength(expected: 255, actual: dst.count) }
        let dstPrime = dst + [UInt8(dst.count)]
        var prime = [UInt8](repeating: 0, count: 64)  // Z_pad
        prime += message
        prime += [UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length), 0]
        prime += dstPrime
        let b0 = SHA256.hash(prime)
        var previous = SHA256.hash(b0 + [1] + dstPrime)
        var uniform = previous
        uniform.reserveCapacity(32 * ell)
        if ell >= 2 {
            for i in 2...ell {
                var mixed = [UInt8](repeating: 0, count: 32)
                for k in 0..<32 { mixed[k] = b0[k] ^ previous[k] }
                previous = SHA256.hash(mixed + [UInt8(i)] + dstPrime)
                uniform += previous
            }
        }
        return Array(uniform.prefix(length))
    }

    /// RFC 9380 §5.2 `hash_to_field(msg, 1)` into Z_n: `expand_message_xmd` (SHA-256) with L = 48,
    /// the 48 bytes read big-endian and reduced modulo n (bias ≈ 2^-128). Constant time: the 48 bytes
    /// are zero-extended to 64 and go through the Montgomery wide reduction, which has no branch on
    /// the value. This is H1/H2/H3 of RFC 9591 §6.5 FROST(secp256k1, SHA-256) with the DST given.
    public static func hashToScalar(_ message: [UInt8], dst: [UInt8]) throws(CryptoError) -> Scalar {
        let uniform = try expandMessageXMD(message, dst: dst, length: 48)
        return try Scalar(reducingWide: [UInt8](repeating: 0, count: 16) + uniform)
    }
}
