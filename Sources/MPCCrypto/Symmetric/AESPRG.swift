/// A pseudorandom generator: the AES-256-CTR key stream under a 32-byte seed and a 16-byte
/// initial counter block (the platform backend: OpenSSL on Linux, CommonCrypto on Apple; AES instructions where
/// the processor has them).
///
/// Security assumption: AES-256 is a pseudorandom permutation, so distinct (seed, counter block)
/// pairs give independent-looking streams. Never reuse a (seed, counter block) pair for two purposes.
public final class AESPRG {
    private let cipher: AESCTRBackend

    /// A generator for `seed` (32 bytes) starting at `counterBlock` (16 bytes, default zero).
    public init(seed: [UInt8], counterBlock: [UInt8] = [UInt8](repeating: 0, count: 16)) throws(CryptoError) {
        guard seed.count == 32 else { throw .invalidLength(expected: 32, actual: seed.count) }
        guard counterBlock.count == 16 else { throw .invalidLength(expected: 16, actual: counterBlock.count) }
        cipher = try AESCTRBackend(key: seed, counterBlock: counterBlock)
    }

    /// Fills `buffer` with the next bytes of the stream.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count > 0 else { return }
        // CTR mode: encrypting zeros yields the key stream. Encrypt in place.
        base.initialize(repeating: 0, count: buffer.count)
        cipher.encryptInPlace(base, count: buffer.count)
    }

    /// The next `count` bytes of the stream.
    public func bytes(count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }
}
