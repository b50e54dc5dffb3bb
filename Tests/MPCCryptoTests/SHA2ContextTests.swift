import Testing
@testable import MPCCrypto

@Suite("SHA2Context (low-level OpenSSL state, midstates)")
struct SHA2ContextTests {
    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    @Test("digests equal the EVP one-shot for every length 0…300, in one piece and in pieces", arguments: [32, 64])
    func matchesOneShot(byteCount: Int) {
        let context = byteCount == 32 ? SHA2Context(SHA256.self) : SHA2Context(SHA512.self)
        let oneShot: ([UInt8]) -> [UInt8] = byteCount == 32 ? { SHA256.hash($0) } : { SHA512.hash($0) }
        for length in 0...300 {
            let input = Self.randomBytes(length)
            context.update(input)
            #expect(context.finalize() == oneShot(input))
            // In pieces; `finalize` started a new digest.
            let cut = length / 3
            context.update(Array(input[..<cut]))
            context.update(Array(input[cut...]))
            #expect(context.finalize() == oneShot(input))
        }
    }

    @Test("a saved midstate after whole blocks gives the digest of prefix ‖ suffix, again and again", arguments: [32, 64])
    func midstates(byteCount: Int) {
        let context = byteCount == 32 ? SHA2Context(SHA256.self) : SHA2Context(SHA512.self)
        let oneShot: ([UInt8]) -> [UInt8] = byteCount == 32 ? { SHA256.hash($0) } : { SHA512.hash($0) }
        for blocks in 0...3 {
            let prefix = Self.randomBytes(blocks * context.blockByteCount)
            context.reset()
            context.update(prefix)
            context.saveMidstate()
            for suffixLength in [0, 1, 4, 55, 56, 64, 111, 112, 128, 200] {
                let suffix = Self.randomBytes(suffixLength)
                context.resetToMidstate()
                context.update(suffix)
                #expect(context.finalize() == oneShot(prefix + suffix))
            }
        }
    }
}
