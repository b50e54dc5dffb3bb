import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

@Suite("DKLs23 soft BIP32: xpub", .heavy)
struct DKLsBIP32Tests {
    // BIP32 test vector 1 (seed 000102…0f): extended public keys along m/0'/1/2'/2/1000000000.
    static let vector1 = [
        "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
        "xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ",
        "xpub6D4BDPcP2GT577Vvch3R8wDkScZWzQzMMUm3PWbmWvVJrZwQY4VUNgqFJPMM3No2dFDFGTsxxpG5uJh7n7epu4trkrX7x7DogT5Uv6fcLW5",
        "xpub6FHa3pjLCk84BayeJxFW2SP4XRrFd1JYnxeLeU8EqN3vDfZmbqBqaGJAyiLjTAwm6ZLRQUMv1ZACTj37sR62cfN7fe5JnJ7dh8zL4fiyLHV",
        "xpub6H1LXWLaKsWFhvm6RVpEL9P4KfRZSW7abD2ttkWP3SSQvnyA8FSVqNTEcYFgJS2UaFcxupHiYkro49S8yGasTvXEYBVPamhGW6cFJodrTHy",
    ]

    @Test func bip32TestVectorPublicSteps() throws {
        for text in Self.vector1 {
            let key = try BIP32ExtendedPublicKey(base58: text)
            #expect(key.base58 == text && key.serialized.count == 78)
        }
        // Public derivation: m/0'/1 → /2' is hardened (refused); m/0'/1/2' → /2 → /1000000000.
        let m0h1 = try BIP32ExtendedPublicKey(base58: Self.vector1[1])
        #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) {
            try m0h1.derive(DerivationPath("m/2'", allowHardened: true))
        }
        let m0h12h = try BIP32ExtendedPublicKey(base58: Self.vector1[2])
        #expect(try m0h12h.derive(DerivationPath("m/2")).base58 == Self.vector1[3])
        #expect(try m0h12h.derive(DerivationPath("m/2/1000000000")).base58 == Self.vector1[4])
        // The root's fingerprint is the depth-1 key's parent fingerprint (3442193e in the BIP).
        #expect(try BIP32ExtendedPublicKey(base58: Self.vector1[0]).fingerprint == hex("3442193e"))
    }

    @Test func malformedXpubsAreRefused() throws {
        let good = try BIP32ExtendedPublicKey(base58: Self.vector1[3])
        var bytes = good.serialized
        bytes[45] = 0x05   // key prefix
        for bad in [Base58Check.encode(bytes), Base58Check.encode(Array(good.serialized.dropLast())),
                    String(Self.vector1[3].dropLast()) + "x", ""] {
            #expect(throws: ProtocolError.invalidInput(.invalidParameters)) { try BIP32ExtendedPublicKey(base58: bad) }
        }
        var rootWithParent = try BIP32ExtendedPublicKey(base58: Self.vector1[0]).serialized
        rootWithParent[5] = 1   // depth 0 with a non-zero parent fingerprint
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try BIP32ExtendedPublicKey(base58: Base58Check.encode(rootWithParent))
        }
    }

    @Test func keyshareChildXpubMatchesSigningKey() throws {
        let keyshares = try DKLsHarness.keygen(n: 2, t: 2, seed: 4_200)
        let root = try DKLsBIP32.rootPublicKey(keyshare: keyshares[0])
        #expect(root.depth == 0 && root.base58.hasPrefix("xpub"))
        let path = try DerivationPath("m/44/60/0/0/9")
        let child = try DKLsBIP32.deriveChildPublicKey(keyshare: keyshares[1], path: path)
        let direct = try path.derive(publicKey: keyshares[0].publicKey, chainCode: keyshares[0].rootChainCode)
        #expect(child.publicKey == direct.publicKey && child.chainCode == direct.chainCode)
        #expect(child.depth == 5 && child.childNumber == 9)
        let parent = try DKLsBIP32.deriveChildPublicKey(keyshare: keyshares[0], path: DerivationPath("m/44/60/0/0"))
        #expect(child.parentFingerprint == parent.fingerprint)
        #expect(try root.derive(path) == child)
        #expect(try BIP32ExtendedPublicKey(base58: child.base58) == child)
        #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) {
            try DKLsBIP32.deriveChildPublicKey(keyshare: keyshares[0], path: DerivationPath("m/0/1'", allowHardened: true))
        }
        let hash = SHA256.hash(Array("xpub child".utf8))
        let (signature, _) = try DKLsHarness.sign(keyshares, signers: [0, 1], hash: hash, path: path, seed: 5)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: child.publicKey))
    }
}
