import Foundation
import MPCCrypto
import Testing

@Suite("Hashes, MACs, PRGs, AEADs, X25519")
struct SymmetricTests {
    /// scripts/check-commoncrypto-backend runs this target with SILENTSHARD_COMMONCRYPTO_SHIM=1: then every known
    /// answer here must have gone through the CommonCrypto backend (over its Linux shim), not OpenSSL.
    @Test func theBuildsBackendIsInUse() {
        let shim = ProcessInfo.processInfo.environment["SILENTSHARD_COMMONCRYPTO_SHIM"] == "1"
        #expect(CryptoBackendSelection.symmetric == (shim ? "CommonCrypto" : "OpenSSL"))
    }

    @Test func sha2KnownAnswers() {
        #expect(SHA256.hash(Array("abc".utf8)) == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(SHA256.hash([]) == hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
        #expect(SHA512.hash(Array("abc".utf8)) == hex(
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"))
        // FIPS 180-4 two-block message.
        let twoBlocks = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hash(twoBlocks) == hex("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"))
        let hasher = SHA2Hasher(SHA256.self)
        hasher.update(Array("ab".utf8))
        hasher.update([])
        hasher.update(Array("c".utf8))
        #expect(hasher.finalize() == SHA256.hash(Array("abc".utf8)))
    }

    @Test func hmacRFC4231() {
        let key1 = [UInt8](repeating: 0x0B, count: 20), data1 = Array("Hi There".utf8)
        #expect(SHA256.hmac(key: key1, data: data1) == hex("b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"))
        #expect(SHA512.hmac(key: key1, data: data1) == hex(
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"))
        let key2 = Array("Jefe".utf8), data2 = Array("what do ya want for nothing?".utf8)
        #expect(SHA256.hmac(key: key2, data: data2) == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        #expect(SHA512.hmac(key: key2, data: data2) == hex(
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"))
        #expect(SHA256.hmac(key: [], data: []).count == 32)
    }

    @Test func aesCTRMatchesSP800_38A() throws {
        // SP 800-38A F.5.5 CTR-AES256: key stream = ciphertext ⊕ plaintext.
        let prg = try AESPRG(seed: hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"),
                             counterBlock: hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"))
        let plaintext = hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")
        let ciphertext = hex("601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5")
        let stream = prg.bytes(count: 16) + prg.bytes(count: 16)  // continues across calls
        #expect(zip(plaintext, stream).map { $0 ^ $1 } == ciphertext)
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 16)) { try AESPRG(seed: [UInt8](repeating: 0, count: 16)) }
        let a = try AESPRG(seed: [UInt8](repeating: 7, count: 32)).bytes(count: 1000)
        let b = try AESPRG(seed: [UInt8](repeating: 7, count: 32)).bytes(count: 1000)
        let c = try AESPRG(seed: [UInt8](repeating: 8, count: 32)).bytes(count: 1000)
        #expect(a == b && a != c)
    }

    @Test func chaCha20Poly1305RFC8439() throws {
        let key = Array(UInt8(0x80)...UInt8(0x9F))
        let nonce = hex("070000004041424344454647")
        let aad = hex("50515253c0c1c2c3c4c5c6c7")
        let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)
        let expected = hex("d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d26586cec64b6116"
                           + "1ae10b594f09e26a7e902ecbd0600691")
        let sealed = try ChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, associatedData: aad)
        #expect(sealed == expected)
        #expect(try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, associatedData: aad) == plaintext)
        var tampered = sealed
        tampered[3] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try ChaCha20Poly1305.open(tampered, key: key, nonce: nonce, associatedData: aad) }
        #expect(throws: CryptoError.authenticationFailed) { try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, associatedData: []) }
        #expect(throws: CryptoError.authenticationFailed) { try ChaCha20Poly1305.open([1, 2, 3], key: key, nonce: nonce) }
        #expect(throws: CryptoError.invalidLength(expected: 12, actual: 24)) {
            try ChaCha20Poly1305.seal([], key: key, nonce: [UInt8](repeating: 0, count: 24))
        }
        #expect(try ChaCha20Poly1305.open(ChaCha20Poly1305.seal([], key: key, nonce: nonce), key: key, nonce: nonce) == [])
    }

    @Test func xChaCha20Poly1305RoundTrip() throws {
        let key = SecureRandom.bytes(count: 32), nonce = SecureRandom.bytes(count: 24)
        let sealed = try XChaCha20Poly1305.seal(Array("hello".utf8), key: key, nonce: nonce, associatedData: [9])
        #expect(sealed.count == 5 + 16)
        #expect(try XChaCha20Poly1305.open(sealed, key: key, nonce: nonce, associatedData: [9]) == Array("hello".utf8))
        #expect(throws: CryptoError.authenticationFailed) { try XChaCha20Poly1305.open(sealed, key: key, nonce: nonce, associatedData: [8]) }
    }

    @Test func x25519RFC7748() throws {
        let alice = try X25519.PrivateKey(rawRepresentation: hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try X25519.PrivateKey(rawRepresentation: hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(alice.publicKey.bytes == hex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        #expect(bob.publicKey.bytes == hex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        let shared = hex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
        #expect(try alice.sharedSecret(with: bob.publicKey) == shared)
        #expect(try bob.sharedSecret(with: alice.publicKey) == shared)
        // Small-order peer keys give the all-zero secret: rejected.
        let zero = try X25519.PublicKey(bytes: [UInt8](repeating: 0, count: 32))
        #expect(throws: CryptoError.weakSharedSecret) { try alice.sharedSecret(with: zero) }
        let one = try X25519.PublicKey(bytes: [1] + [UInt8](repeating: 0, count: 31))
        #expect(throws: CryptoError.weakSharedSecret) { try alice.sharedSecret(with: one) }
        let fresh = X25519.PrivateKey()
        #expect(try fresh.sharedSecret(with: alice.publicKey) == alice.sharedSecret(with: fresh.publicKey))
    }

    @Test func deterministicRandomIsReproducible() throws {
        var a = DeterministicRandom(seed: 99), b = DeterministicRandom(seed: 99), c = DeterministicRandom(seed: 100)
        let streamA = a.randomBytes(count: 3000)
        #expect(streamA == b.randomBytes(count: 3000))
        #expect(streamA != c.randomBytes(count: 3000))
        #expect(throws: CryptoError.invalidLength(expected: 32, actual: 3)) { try DeterministicRandom(seed: [1, 2, 3]) }
        #expect(SecureRandom.bytes(count: 32) != SecureRandom.bytes(count: 32))
    }

    @Test func hexAndConstantTimeEquality() throws {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(try Hex.decode("00ABff") == [0x00, 0xAB, 0xFF])
        #expect(throws: CryptoError.invalidHex) { try Hex.decode("abc") }
        #expect(throws: CryptoError.invalidHex) { try Hex.decode("zz") }
        #expect(constantTimeEqual([1, 2], [1, 2]) && !constantTimeEqual([1, 2], [1, 3]) && !constantTimeEqual([1], [1, 2]))
    }
}
