import MPCCrypto
import Testing

/// The known answers of docs/protocol/dkls23.md, Appendix A, for the framing and hashing of §5.
@Suite("Domain-separated hashing (DKLs23 spec §5)")
struct DomainHashTests {
    let dkls = DomainHash(protocolLabel: "SilentShard-DKLs23-v1")
    let abc = Array("abc".utf8)

    @Test func frame() {
        #expect(dkls.frame("ex", [[0x01], []]) == hex(
            "0000001553696c656e7453686172642d444b4c7332332d763100000002657800000002000000010100000000"))
    }

    @Test func hashes() {
        #expect(dkls.hash("kat", abc) == hex("f56af0fc409bba098f3743af91c0fbf8a7f1726b85b2477c9d8971626b210083"))
        #expect(dkls.hash512("kat", fields: [abc]) == hex(
            "caae42c14b6a528342cac4d79ee26ce2a2cfb039b3c3efdf496c4baa69a14626b5ce50f95ba99e9b60ac41e1236ba9ceb96428806997e97da9f09611e5c65631"))
        #expect(dkls.hashToScalar("kat", fields: [abc]).bytes == hex("a12efe02e308ed2f6a84629da08ee7979213677534d3e3ac7434cab3ae8b3f77"))
    }

    @Test func prg() {
        #expect(dkls.prg(seed: [UInt8](repeating: 1, count: 32), label: Array("kat".utf8), count: 40) == hex(
            "59305d607fdceb0ac0fd195abf305bb1161468dd316caa0f8f8d33b469aee4f8ab9e26c9c20d0d22"))
    }

    @Test func keyIdAndSchnorrChallenge() throws {
        let g = try Secp256k1.Point.generator.compressed()
        #expect(dkls.hash("key-id", g) == hex("68b55730fd4ba5312161f815b34ac574d2a0308e05b1fb61e0a94b9bb1454c11"))
        let twoG = try Secp256k1.Point(base: Secp256k1.Scalar(2)).compressed()
        let challenge = dkls.hashToScalar("pok/schnorr", fields: [[UInt8](repeating: 0, count: 32), [0x00] + Array("x".utf8), g, twoG])
        #expect(challenge.bytes == hex("1c694f288bebb834bf600ecc2f4188e256a6a473c2850e14ba78a5dca3cde25c"))
    }

    @Test func fieldsAreUnambiguous() {
        // Moving a byte between fields, or splitting one field in two, changes the hash.
        #expect(dkls.hash("t", [1, 2], [3]) != dkls.hash("t", [1], [2, 3]))
        #expect(dkls.hash("t", [1, 2]) != dkls.hash("t", [1], [2]))
        #expect(dkls.hash("t", [1]) != DomainHash(protocolLabel: "other").hash("t", [1]))
    }

    @Test func lagrangeKnownAnswer() throws {
        // λ_0 for points {5, 9} is 9 / (9 − 5) = 9/4.
        let lambda = Secp256k1.Scalar(9) * (try Secp256k1.Scalar(4).inverse())
        #expect(lambda.bytes == hex("bfffffffffffffffffffffffffffffff0c0325ad0376782ccfddc6e99c28b0f3"))
    }
}
