internal import CSodium

/// The operating system's CSPRNG (libsodium `randombytes_buf`, getrandom(2) on Linux).
public struct SecureRandom: RandomNumberGenerator, Sendable {
    /// Unused: it only gives the generator a size. A zero-sized value passed `inout` into generic code
    /// made ThreadSanitizer report "access races" on addresses that are not objects, and crash in its
    /// own access check (Fuzz/README.md, "Sanitizers").
    private var sizePadding: UInt8 = 0

    public init() { Sodium.ensureReady() }

    public mutating func next() -> UInt64 {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
        return value
    }

    /// Fills the buffer with random bytes.
    public static func fill(_ bytes: inout [UInt8]) {
        Sodium.ensureReady()
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
    }

    /// `count` random bytes.
    public static func bytes(count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        fill(&out)
        return out
    }
}

/// A deterministic generator for tests and known-answer transcripts: the ChaCha20 key stream under a
/// 32-byte seed (libsodium `crypto_stream_chacha20_ietf`). Never use it for real keys.
public struct DeterministicRandom: RandomNumberGenerator, Sendable {
    private let seed: [UInt8]
    private var block: [UInt8] = []
    private var blockCounter: UInt32 = 0
    private var offset = 0

    /// A generator whose output is fixed by the 32-byte seed.
    public init(seed: [UInt8]) throws(CryptoError) {
        guard seed.count == 32 else { throw .invalidLength(expected: 32, actual: seed.count) }
        self.seed = seed
    }

    /// A generator seeded from a small integer (tests).
    public init(seed value: UInt64) {
        var seed = [UInt8](repeating: 0, count: 32)
        for k in 0..<8 { seed[k] = UInt8(truncatingIfNeeded: value >> UInt64(8 * k)) }
        self.seed = seed
    }

    public mutating func next() -> UInt64 {
        if offset + 8 > block.count { refill() }
        var value: UInt64 = 0
        for k in 0..<8 { value |= UInt64(block[offset + k]) << UInt64(8 * k) }
        offset += 8
        return value
    }

    private mutating func refill() {
        // 16 ChaCha20 blocks at a time; the block counter never wraps within a test's needs.
        let zeros = [UInt8](repeating: 0, count: 1024)
        var stream = [UInt8](repeating: 0, count: 1024)
        let nonce = [UInt8](repeating: 0, count: 12)
        _ = crypto_stream_chacha20_ietf_xor_ic(&stream, zeros, 1024, nonce, blockCounter, seed)
        blockCounter &+= 16
        block = stream
        offset = 0
    }
}

extension RandomNumberGenerator {
    /// `count` random bytes drawn from this generator.
    public mutating func randomBytes(count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count {
            let word = next()
            for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: word >> UInt64(8 * k))) }
        }
        return Array(out.prefix(count))
    }
}
