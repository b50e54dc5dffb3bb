import CSecp256k1
import MPCCrypto
import Testing

@Suite("secp256k1 scalars")
struct Secp256k1ScalarTests {
    typealias Scalar = Secp256k1.Scalar

    /// Random values plus the edge cases 0, 1, 2, n−1, n−2, 2^255 − 1.
    static func samples(count: Int, seed: UInt64) -> [Scalar] {
        var rng = DeterministicRandom(seed: seed)
        var values: [Scalar] = [.zero, .one, Scalar(2)]
        for edge in [orderMinus(1), orderMinus(2), [0x7F] + [UInt8](repeating: 0xFF, count: 31)] {
            if let value = try? Scalar(bytes: edge) { values.append(value) }
        }
        for _ in 0..<count { values.append(.random(using: &rng)) }
        return values
    }

    @Test func fieldAxioms() throws {
        let values = Self.samples(count: 60, seed: 1)
        for (index, a) in values.enumerated() {
            let b = values[(index * 7 + 3) % values.count]
            let c = values[(index * 13 + 5) % values.count]
            #expect(a + b == b + a)
            #expect(a * b == b * a)
            #expect((a + b) + c == a + (b + c))
            #expect((a * b) * c == a * (b * c))
            #expect(a * (b + c) == a * b + a * c)
            #expect(a - a == .zero)
            #expect(a + (-a) == .zero)
            #expect(a - b == a + (-b))
            #expect(a * .one == a)
            #expect(a + .zero == a)
            if !a.isZero {
                #expect(a * (try a.inverse()) == .one)
            }
        }
    }

    @Test func encodingRoundTripsAndRangeChecks() throws {
        for value in Self.samples(count: 50, seed: 2) {
            #expect(try Scalar(bytes: value.bytes) == value)
        }
        #expect(try Scalar(bytes: orderMinus(1)).bytes == orderMinus(1))
        #expect(throws: CryptoError.scalarOutOfRange) { try Scalar(bytes: hex(secp256k1OrderHex)) }
        #expect(throws: CryptoError.scalarOutOfRange) { try Scalar(bytes: [UInt8](repeating: 0xFF, count: 32)) }
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 31)) { try Scalar(bytes: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: CryptoError.zeroScalar) { try Scalar(nonZeroBytes: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.zeroScalar) { try Scalar.zero.inverse() }
        // n − 1 = −1.
        #expect(try Scalar(bytes: orderMinus(1)) == -Scalar.one)
    }

    @Test func knownAnswers() throws {
        #expect(try Scalar(2).inverse().bytes == hex("7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a1"))
        #expect(try Scalar(3).inverse().bytes == hex("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa9d1c9e899ca306ad27fe1945de0242b81"))
        // Reduction: n reduces to 0, n + 1 (as 2^256 − c + 1 < 2^256) to 1, 2^256 − 1 to 2^256 − 1 − n.
        #expect(try Scalar(reducing: hex(secp256k1OrderHex)) == .zero)
        #expect(try Scalar(reducing: [UInt8](repeating: 0xFF, count: 32)).bytes
                == hex("000000000000000000000000000000014551231950b75fc4402da1732fc9bebe"))
        // Wide: 2^256 mod n = 2^256 − n.
        let twoTo256 = [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 32)
        #expect(try Scalar(reducingWide: twoTo256).bytes
                == hex("000000000000000000000000000000014551231950b75fc4402da1732fc9bebf"))
        // (n − 1) · (n − 1) = 1.
        let minusOne = try Scalar(bytes: orderMinus(1))
        #expect(minusOne * minusOne == .one)
        #expect(Scalar(7).power(publicExponent: [3]) == Scalar(343))
    }

    @Test func wideReductionMatchesTwoStepReduction() throws {
        var rng = DeterministicRandom(seed: 3)
        for _ in 0..<100 {
            let wide = rng.randomBytes(count: 64)
            let high = try Scalar(reducing: Array(wide[0..<32]))
            let low = try Scalar(reducing: Array(wide[32..<64]))
            let twoTo256 = try Scalar(reducingWide: [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 32))
            #expect(try Scalar(reducingWide: wide) == high * twoTo256 + low)
        }
    }

    /// Differential test against libsecp256k1's own scalar arithmetic (seckey tweak functions).
    @Test func agreesWithLibsecp256k1() throws {
        guard let context = secp256k1_context_create(silentshard_secp256k1_context_none()) else {
            Issue.record("no context"); return
        }
        defer { secp256k1_context_destroy(context) }
        let values = Self.samples(count: 200, seed: 4).filter { !$0.isZero }
        for (index, a) in values.enumerated() {
            let b = values[(index * 11 + 1) % values.count]
            var sum = a.bytes
            if secp256k1_ec_seckey_tweak_add(context, &sum, b.bytes) == 1 {
                #expect(sum == (a + b).bytes)
            } else {
                #expect((a + b).isZero)
            }
            var product = a.bytes
            #expect(secp256k1_ec_seckey_tweak_mul(context, &product, b.bytes) == 1)
            #expect(product == (a * b).bytes)
            var negated = a.bytes
            #expect(secp256k1_ec_seckey_negate(context, &negated) == 1)
            #expect(negated == (-a).bytes)
            // a · a⁻¹ = 1 by libsecp256k1's multiplication.
            var check = a.bytes
            #expect(secp256k1_ec_seckey_tweak_mul(context, &check, try a.inverse().bytes) == 1)
            #expect(check == Scalar.one.bytes)
        }
    }

    @Test func descriptionHidesTheValue() {
        let secret = Scalar(123_456_789)
        #expect(!"\(secret)".contains("75bcd15"))
        #expect("\(secret)" == "Secp256k1.Scalar(redacted)")
        #expect(String(reflecting: secret) == "Secp256k1.Scalar(redacted)")
    }

    @Test func randomScalarsAreNonZeroAndDistinct() {
        var rng = SecureRandom()
        let a = Scalar.random(using: &rng)
        let b = Scalar.random(using: &rng)
        #expect(!a.isZero && !b.isZero && a != b)
    }
}
