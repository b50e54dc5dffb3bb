import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardChains
import SilentShardCore
import Testing

/// Issue 21, first increment: Keccak-256, addresses with EIP-55, personal_sign (EIP-191) over the SDK's
/// signatures. Known answers from the standards and from pycryptodome / eth-keys; `interop/test_chains.py`
/// checks random cases against eth-keys.
@Suite("Ethereum: Keccak-256, addresses, personal_sign")
struct EthereumBasicsTests {
    @Test func keccak256KnownAnswers() {
        let cases: [([UInt8], String)] = [
            ([], "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"),
            (Array("abc".utf8), "4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45"),
            ([UInt8](repeating: 0x61, count: 135), "34367dc248bbd832f4e3e69dfaac2f92638bd0bbd18f2912ba4ef454919cf446"),
            ([UInt8](repeating: 0x61, count: 136), "a6c4d403279fe3e0af03729caada8374b5ca54d8065329a3ebcaeb4b60aa386e"),
            ([UInt8](repeating: 0x61, count: 137), "d869f639c7046b4929fc92a4d988a8b22c55fbadb802c0c66ebcd484f1915f39"),
            ((0..<512).map { UInt8(truncatingIfNeeded: $0) }, "f55ba327291604f0e5be6651752398b7be2331aad65f5763ce067df95cc13be1"),
        ]
        for (input, digest) in cases {
            #expect(Hex.encode(Keccak256.hash(input)) == digest, "\(input.count) bytes")
        }
    }

    /// The EIP-55 test vectors (all caps, all lower, normal).
    @Test func eip55Checksums() throws {
        let vectors = [
            "0x52908400098527886E0F7030069857D2E4169EE7", "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
            "0xde709f2102306220921060314715629080e2fb77", "0x27b1fdb04752bbc536007a920d24acb045561c26",
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
            "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
        ]
        for vector in vectors {
            #expect(try EthereumAddress(vector.lowercased()).checksummed == vector)
            #expect(try EthereumAddress(vector).checksummed == vector)
        }
        // One letter's case flipped: refused.
        #expect(throws: ChainError.checksumMismatch) { try EthereumAddress("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD") }
        for bad in ["5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA",
                    "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeg", "0x", ""] {
            #expect(throws: ChainError.self) { try EthereumAddress(bad) }
        }
    }

    @Test func addressOfAPublicKey() throws {
        let one = try Secp256k1.Point(base: Secp256k1.Scalar(1)).compressed()
        #expect(try EthereumAddress(publicKey: Data(one)).checksummed == "0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf")
        let uncompressed = try Secp256k1.Point(base: Secp256k1.Scalar(1)).uncompressed()
        #expect(try EthereumAddress(publicKey: Data(uncompressed)) == EthereumAddress(publicKey: Data(one)))
        #expect(throws: ChainError.invalidPublicKey) { try EthereumAddress(publicKey: Data([0x05] + [UInt8](repeating: 2, count: 32))) }
        #expect(throws: ChainError.invalidPublicKey) { try EthereumAddress(publicKey: Data(count: 20)) }
    }

    @Test func personalMessageHashes() {
        #expect(Hex.encode([UInt8](EthereumPersonalMessage.hash(Data("hello".utf8))))
                == "50b2c43fd39106bafbba0da34fc430e1f91e3c96ea2acee2bc34119f92b37750")
        #expect(Hex.encode([UInt8](EthereumPersonalMessage.hash(Data())))
                == "5f35dce98ba4fba25530a026ed80b2cecdaa31091ba4958b99b52ea1d068adad")
    }

    /// A threshold signature (DKLs23, 2-of-2 in process) at a soft path, as an app's closure over
    /// `session.signature(keyshare:message:chainPath:)` gives it: it recovers to the child's address; a
    /// closure signing at another path is caught.
    @Test func personalSignWithAThresholdKey() async throws {
        var rng = DeterministicRandom(seed: 2121)
        let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let keyshare = try Keyshare(dkls: shares[0], mode: .duo)
        let path = "m/44/60/0/0/7"
        let child = try keyshare.childPublicKey(path: path)
        func signer(_ path: String) -> (Data) async throws -> Signature {
            { hash in
                var rng = SystemRandomNumberGenerator()
                return Signature(ecdsa: try DKLsInProcess.sign(shares, messageHash: [UInt8](hash), path: try DerivationPath(path), using: &rng))
            }
        }
        let message = Data("Sign in to example.com, nonce 42".utf8)
        let signature = try await EthereumPersonalMessage.sign(message, publicKey: child, with: signer(path))
        #expect(try EthereumPersonalMessage.signer(of: message, signature: signature) == EthereumAddress(publicKey: child))
        #expect(try EthereumSignature(rsv: signature.rsv) == signature)
        #expect([27, 28].contains(signature.rsv.last))
        await #expect(throws: ChainError.signatureMismatch) {
            _ = try await EthereumPersonalMessage.sign(message, publicKey: child, with: signer("m/44/60/0/0/8"))
        }
    }

    @Test func malformedSignaturesAreTypedErrors() throws {
        #expect(throws: ChainError.self) { try EthereumSignature(rsv: Data(count: 64)) }
        #expect(throws: ChainError.self) { try EthereumSignature(rsv: Data(count: 65)) }   // r = s = 0
        var highS = [UInt8](repeating: 0x11, count: 32) + [UInt8](repeating: 0xFF, count: 31) + [0x40, 27]
        highS[32] = 0xFF
        #expect(throws: ChainError.self) { try EthereumSignature(rsv: Data(highS)) }
        var badV = [UInt8](repeating: 0x11, count: 64) + [29]
        #expect(throws: ChainError.self) { try EthereumSignature(rsv: Data(badV)) }
        badV[64] = 28
        #expect(try EthereumSignature(rsv: Data(badV)).yParity == 1)
        #expect(throws: ChainError.self) { try EthereumSignature(Signature(eddsa: Data(count: 64))) }
    }
}
