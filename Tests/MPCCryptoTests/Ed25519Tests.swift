import CSodium
import MPCCrypto
import Testing

@Suite("Ed25519")
struct Ed25519Tests {
    typealias Scalar = Ed25519.Scalar
    typealias Point = Ed25519.Point

    /// RFC 8032 §7.1, tests 1–3: (secret seed, public key, message, signature).
    static let rfc8032: [(String, String, String, String)] = [
        ("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
         "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
         "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"),
        ("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
         "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
         "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"),
        ("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
         "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
         "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"),
    ]

    static let orderHexLE = "edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010"

    @Test func rfc8032Vectors() throws {
        for (seed, publicKey, message, signature) in Self.rfc8032 {
            let key = try Ed25519.SigningKey(seed: hex(seed))
            #expect(key.verifyingKey.bytes == hex(publicKey))
            #expect(key.signature(for: hex(message)) == hex(signature))
            #expect(key.verifyingKey.isValidSignature(hex(signature), for: hex(message)))
            var tampered = hex(signature)
            tampered[10] ^= 0x01
            #expect(!key.verifyingKey.isValidSignature(tampered, for: hex(message)))
            #expect(!key.verifyingKey.isValidSignature(hex(signature), for: hex(message) + [0]))
        }
    }

    @Test func signatureEqualsItsSchnorrEquation() throws {
        // An RFC 8032 signature (R, S) satisfies S·B = R + k·A with k = SHA-512(R ‖ A ‖ M) mod ℓ.
        for (seed, _, message, _) in Self.rfc8032 {
            let key = try Ed25519.SigningKey(seed: hex(seed))
            let signature = key.signature(for: hex(message))
            let r = try Point(bytes: Array(signature[0..<32]))
            let s = try Scalar(bytes: Array(signature[32..<64]))
            let a = try Point(bytes: key.verifyingKey.bytes)
            let k = try Scalar(reducingWide: SHA512.hash(Array(signature[0..<32]) + key.verifyingKey.bytes + hex(message)))
            #expect(Point(base: s) == r + k * a)
        }
    }

    @Test func scalarAxioms() throws {
        var rng = DeterministicRandom(seed: 20)
        let minusOne = try Scalar(bytes: hex("ecd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010"))
        var values: [Scalar] = [.zero, .one, Scalar(2), minusOne]
        for _ in 0..<40 { values.append(.random(using: &rng)) }
        for (index, a) in values.enumerated() {
            let b = values[(index * 7 + 1) % values.count], c = values[(index * 5 + 2) % values.count]
            #expect(a + b == b + a)
            #expect(a * (b + c) == a * b + a * c)
            #expect((a * b) * c == a * (b * c))
            #expect(a - b == a + (-b))
            #expect(a + (-a) == .zero)
            if !a.isZero { #expect(a * (try a.inverse()) == .one) }
            #expect(try Scalar(bytes: a.bytes) == a)
        }
        #expect(minusOne == -Scalar.one)
        #expect(minusOne * minusOne == .one)
        #expect(throws: CryptoError.scalarOutOfRange) { try Scalar(bytes: hex(Self.orderHexLE)) }
        #expect(throws: CryptoError.scalarOutOfRange) { try Scalar(bytes: [UInt8](repeating: 0xFF, count: 32)) }
        #expect(throws: CryptoError.zeroScalar) { try Scalar.zero.inverse() }
        #expect(throws: CryptoError.zeroScalar) { try Scalar(nonZeroBytes: [UInt8](repeating: 0, count: 32)) }
        #expect(try Scalar(reducingWide: hex(Self.orderHexLE) + [UInt8](repeating: 0, count: 32)) == .zero)
        #expect("\(Scalar(42))" == "Ed25519.Scalar(redacted)")
    }

    @Test func pointGroupLaws() throws {
        var rng = DeterministicRandom(seed: 21)
        for _ in 0..<25 {
            let a = Scalar.random(using: &rng), b = Scalar.random(using: &rng)
            let pa = Point(base: a), pb = Point(base: b)
            #expect(pa + pb == Point(base: a + b))
            #expect(pa - pb == Point(base: a - b))
            #expect(a * pb == Point(base: a * b))
            #expect(try Point(bytes: pa.bytes) == pa)
            #expect((pa - pa).isIdentity)
            #expect(-pa + pa == .identity)
        }
        #expect(Point(base: .zero).isIdentity)
        #expect((Scalar.zero * Point.generator).isIdentity)
        #expect((Scalar(3) * Point.identity).isIdentity)
        #expect(Point.generator.bytes == hex("5866666666666666666666666666666666666666666666666666666666666666"))
        #expect(try Point(bytes: Point.identity.bytes, allowingIdentity: true).isIdentity)
    }

    @Test func rejectsSmallOrderNonCanonicalAndTorsionPoints() throws {
        #expect(throws: CryptoError.identityPoint) { try Point(bytes: Point.identity.bytes) }
        let smallOrder = [
            "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2
            "0000000000000000000000000000000000000000000000000000000000000000", // order 4
            "0000000000000000000000000000000000000000000000000000000000000080", // order 4
            "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
            "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // y = p: non-canonical
        ]
        for encoding in smallOrder {
            #expect(throws: CryptoError.pointNotInPrimeOrderSubgroup) { try Point(bytes: hex(encoding)) }
        }
        // B + T with T of order 2: on the curve but outside the prime-order subgroup.
        var mixed = [UInt8](repeating: 0, count: 32)
        #expect(crypto_core_ed25519_add(&mixed, Point.generator.bytes, hex(smallOrder[0])) == 0)
        #expect(throws: CryptoError.pointNotInPrimeOrderSubgroup) { try Point(bytes: mixed) }
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 33)) { try Point(bytes: [UInt8](repeating: 1, count: 33)) }
        #expect(throws: CryptoError.invalidKey) { try Ed25519.VerifyingKey(bytes: hex(smallOrder[3])) }
    }
}
