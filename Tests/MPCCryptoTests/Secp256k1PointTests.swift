import MPCCrypto
import Testing

@Suite("secp256k1 points")
struct Secp256k1PointTests {
    typealias Scalar = Secp256k1.Scalar
    typealias Point = Secp256k1.Point

    static let g = "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"
    static let twoG = "02c6047f9441ed7d6d3045406e95c07cd85c778e4b8cef3ca7abac09b95c709ee5"
    static let threeG = "02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9"
    static let minusG = "0379be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798"

    @Test func knownMultiples() throws {
        #expect(try Point.generator.compressed() == hex(Self.g))
        #expect(try Point(base: Scalar(2)).compressed() == hex(Self.twoG))
        #expect(try (Point.generator + Point.generator).compressed() == hex(Self.twoG))
        #expect(try Point(base: Scalar(3)).compressed() == hex(Self.threeG))
        #expect(try (Scalar(3) * Point.generator).compressed() == hex(Self.threeG))
        let minusOne = try Scalar(bytes: orderMinus(1))
        #expect(try Point(base: minusOne).compressed() == hex(Self.minusG))
        #expect(try (-Point.generator).compressed() == hex(Self.minusG))
        #expect(Point(base: minusOne) + Point.generator == .identity)
    }

    @Test func identityHandling() throws {
        #expect(Point(base: .zero).isIdentity)
        #expect((Scalar.zero * Point.generator).isIdentity)
        #expect((Scalar(5) * Point.identity).isIdentity)
        #expect(Point.identity + Point.generator == Point.generator)
        #expect(Point.generator + Point.identity == Point.generator)
        #expect((Point.generator - Point.generator).isIdentity)
        #expect(-Point.identity == Point.identity)
        #expect(throws: CryptoError.identityPoint) { try Point.identity.compressed() }
        #expect(throws: CryptoError.identityPoint) { try Point.identity.uncompressed() }
        #expect("\(Point.identity)" == "Secp256k1.Point(identity)")
    }

    @Test func groupLaws() throws {
        var rng = DeterministicRandom(seed: 10)
        for _ in 0..<25 {
            let a = Scalar.random(using: &rng), b = Scalar.random(using: &rng)
            let pa = Point(base: a), pb = Point(base: b)
            #expect(pa + pb == Point(base: a + b))
            #expect(pa - pb == Point(base: a - b))
            #expect(b * pa == Point(base: a * b))
            #expect(a * pb == b * pa)
            #expect((pa + pb) + Point.generator == pa + (pb + Point.generator))
            #expect(pa * b == b * pa)
            #expect(try Point(bytes: pa.compressed()) == pa)
            #expect(try Point(bytes: pa.uncompressed()) == pa)
            #expect(try Point(compressed: pa.compressed()).compressed() == pa.compressed())
        }
    }

    @Test func rejectsBadEncodings() throws {
        let compressed = hex(Self.g)
        let uncompressed = try Point.generator.uncompressed()
        // Hybrid encodings of a valid point (0x06/0x07 with the right parity): rejected.
        var hybrid = uncompressed
        hybrid[0] = 0x06 | (uncompressed[64] & 1)
        #expect(throws: CryptoError.invalidPointEncoding) { try Point(bytes: hybrid) }
        hybrid[0] ^= 1
        #expect(throws: CryptoError.invalidPointEncoding) { try Point(bytes: hybrid) }
        // Other prefixes.
        for prefix: UInt8 in [0x00, 0x01, 0x04, 0x05, 0xFF] {
            var bad = compressed
            bad[0] = prefix
            #expect(throws: CryptoError.invalidPointEncoding) { try Point(bytes: bad) }
        }
        // x ≥ p, and x with no point (x = 5: 125 + 7 = 132 is not a square mod p... checked below).
        let xTooLarge = [0x02] + [UInt8](repeating: 0xFF, count: 32)
        #expect(throws: CryptoError.invalidPointEncoding) { try Point(bytes: xTooLarge) }
        var offCurve = uncompressed
        offCurve[64] ^= 1
        #expect(throws: CryptoError.invalidPointEncoding) { try Point(bytes: offCurve) }
        // Lengths and the identity's would-be encodings.
        #expect(throws: CryptoError.invalidLength(expected: 33, actual: 0)) { try Point(bytes: [UInt8]()) }
        #expect(throws: CryptoError.invalidLength(expected: 33, actual: 1)) { try Point(bytes: [0x00]) }
        #expect(throws: CryptoError.invalidLength(expected: 33, actual: 32)) { try Point(bytes: Array(compressed.dropFirst())) }
        #expect(throws: CryptoError.invalidLength(expected: 33, actual: 65)) { try Point(compressed: uncompressed) }
        #expect(throws: CryptoError.invalidPointEncoding) { try Point(bytes: [UInt8](repeating: 0, count: 33)) }
    }

    @Test func xWithoutPointIsRejected() throws {
        // Count how many small x values decode; about half must fail (no square root).
        var failures = 0
        for x in 1...40 {
            let encoding = [0x02] + [UInt8](repeating: 0, count: 31) + [UInt8(x)]
            if (try? Point(bytes: encoding)) == nil { failures += 1 }
        }
        #expect(failures > 5 && failures < 35)
    }

    @Test func ecdsaSignVerifyRecover() throws {
        var rng = DeterministicRandom(seed: 11)
        for _ in 0..<20 {
            let key = Scalar.random(using: &rng)
            let publicKey = Point(base: key)
            let hash = rng.randomBytes(count: 32)
            let signature = try Secp256k1.ECDSA.sign(hash: hash, privateKey: key)
            #expect(signature.isLowS)
            #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: publicKey))
            #expect(try Secp256k1.ECDSA.recoverPublicKey(signature, hash: hash) == publicKey)
            var otherHash = hash
            otherHash[0] ^= 1
            #expect(!Secp256k1.ECDSA.verify(signature, hash: otherHash, publicKey: publicKey))
            // The high-S twin is rejected.
            let highS = try Secp256k1.ECDSASignature(r: signature.r, s: (-Scalar(bytes: signature.s)).bytes,
                                                     recoveryId: signature.recoveryId ^ 1)
            #expect(!highS.isLowS)
            #expect(!Secp256k1.ECDSA.verify(highS, hash: hash, publicKey: publicKey))
            #expect(signature.der.count >= 8 && signature.der.first == 0x30)
        }
        #expect(throws: CryptoError.zeroScalar) {
            try Secp256k1.ECDSASignature(r: [UInt8](repeating: 0, count: 32), s: Scalar.one.bytes, recoveryId: 0)
        }
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 31)) {
            try Secp256k1.ECDSA.sign(hash: [UInt8](repeating: 1, count: 31), privateKey: .one)
        }
    }
}
