import MPCCrypto
import Testing

/// RFC 9380 `expand_message_xmd` (SHA-256) and BIP340 helpers of MPCCrypto.
@Suite("secp256k1 hash to field, tagged hash")
struct Secp256k1HashToFieldTests {
    /// RFC 9380 Appendix K.1 (expand_message_xmd, SHA-256, DST "QUUX-V01-CS02-with-expander-SHA256-128",
    /// len_in_bytes = 0x20), messages "" and "abc". The L = 48 path with ell = 2 is covered byte for byte
    /// by the RFC 9591 FROST(secp256k1, SHA-256) vector (H1, H3).
    @Test func rfc9380ExpandMessageXMD() throws {
        let dst = Array("QUUX-V01-CS02-with-expander-SHA256-128".utf8)
        #expect(try Secp256k1.expandMessageXMD([], dst: dst, length: 32)
            == Hex.decode("68a985b87eb6b46952128911f2a4412bbc302a9d759667f87f7a21d803f07235"))
        #expect(try Secp256k1.expandMessageXMD(Array("abc".utf8), dst: dst, length: 32)
            == Hex.decode("d8ccab23b5985ccea865c6c97b6e5b8350e794e603b4b97902f53a8a0d605615"))
        // Out-of-range parameters are errors, not traps.
        #expect(throws: CryptoError.self) { try Secp256k1.expandMessageXMD([], dst: dst, length: 0) }
        #expect(throws: CryptoError.self) { try Secp256k1.expandMessageXMD([], dst: dst, length: 8161) }
        #expect(throws: CryptoError.self) { try Secp256k1.expandMessageXMD([], dst: [UInt8](repeating: 1, count: 256), length: 32) }
    }

    /// hash_to_field reduces the 48 bytes modulo n: the result is always a canonical scalar.
    @Test func hashToScalarIsCanonical() throws {
        for k in 0..<64 {
            let s = try Secp256k1.hashToScalar([UInt8(k)], dst: Array("test".utf8))
            #expect(try Secp256k1.Scalar(bytes: s.bytes) == s)
        }
    }

    /// BIP340 tagged hash and x-only keys: lift_x gives even y and rejects x without a point.
    @Test func taggedHashAndXOnly() throws {
        let tag = SHA256.hash(Array("BIP0340/challenge".utf8))
        #expect(Secp256k1.taggedHash("BIP0340/challenge", [1, 2]) == SHA256.hash(tag + tag + [1, 2]))
        let g = Secp256k1.Point.generator
        let lifted = try Secp256k1.Point(xOnly: try g.xOnly())
        #expect(lifted.hasEvenY && (lifted == g || lifted == -g))
        #expect(throws: CryptoError.self) { try Secp256k1.Point(xOnly: [UInt8](repeating: 0, count: 31) + [5]) }
        #expect(throws: CryptoError.self) { try Secp256k1.Point(xOnly: [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.self) { try Secp256k1.Point.identity.xOnly() }
        #expect(!Secp256k1.Point.identity.hasEvenY)
    }
}
