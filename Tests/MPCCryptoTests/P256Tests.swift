import MPCCrypto
import Testing

@Suite("P-256 ECDSA")
struct P256Tests {
    // RFC 6979 A.2.5: the P-256 key and the SHA-256 signature of "sample".
    static let privateKey = "c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"
    static let publicKey = "0460fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6"
        + "7903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299"
    static let sampleSignature = "efd48b2aacb6a8fd1140dd9cd45e81d69d2c877b56aaf991c34d0ea84eaf3716"
        + "f7cb1c942d657c41d436c7a1b6e29f65f3e900dbb9aff4064dc4ab2f843acda8"

    @Test func rfc6979KeyAndSignature() throws {
        let key = try P256.SigningKey(rawRepresentation: hex(Self.privateKey))
        #expect(key.verifyingKey.x963Representation == hex(Self.publicKey))
        let signature = try P256.Signature(rawRepresentation: hex(Self.sampleSignature))
        #expect(key.verifyingKey.isValidSignature(signature, for: Array("sample".utf8)))
        #expect(!key.verifyingKey.isValidSignature(signature, for: Array("samplf".utf8)))
        let compressed = try P256.VerifyingKey(x963Representation: key.verifyingKey.compressedRepresentation)
        #expect(compressed == key.verifyingKey)
    }

    @Test func signAndVerifyRawAndDER() throws {
        let key = P256.SigningKey()
        for length in [0, 1, 32, 1000] {
            let message = SecureRandom.bytes(count: length)
            let signature = try key.signature(for: message)
            #expect(key.verifyingKey.isValidSignature(signature, for: message))
            #expect(try P256.Signature(derRepresentation: signature.derRepresentation) == signature)
            #expect(try P256.Signature(rawRepresentation: signature.rawRepresentation) == signature)
            #expect(!P256.SigningKey().verifyingKey.isValidSignature(signature, for: message))
        }
    }

    @Test func rejectsBadInputs() throws {
        let der = try P256.SigningKey().signature(for: [1]).derRepresentation
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signature(derRepresentation: der + [0]) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signature(derRepresentation: Array(der.dropLast())) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signature(derRepresentation: []) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signature(rawRepresentation: [UInt8](repeating: 0, count: 64)) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signature(rawRepresentation: [UInt8](repeating: 0xFF, count: 64)) }
        #expect(throws: CryptoError.invalidKey) { try P256.SigningKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.invalidKey) { try P256.SigningKey(rawRepresentation: [UInt8](repeating: 0xFF, count: 32)) }
        var offCurve = hex(Self.publicKey)
        offCurve[64] ^= 1
        #expect(throws: CryptoError.invalidKey) { try P256.VerifyingKey(x963Representation: offCurve) }
        var hybrid = hex(Self.publicKey)
        hybrid[0] = 0x06 | (hybrid[64] & 1)
        #expect(throws: CryptoError.invalidKey) { try P256.VerifyingKey(x963Representation: hybrid) }
        #expect(throws: CryptoError.invalidKey) { try P256.VerifyingKey(x963Representation: [0x00]) }
    }
}
