import MPCCrypto

/// A quick end-to-end check of the primitive layer against known answers, for `silentshard selfcheck`
/// (and, until the demo on an embedded node exists, `silentshard demo`).
enum SelfCheck {
    struct Check: Sendable {
        let name: String
        let run: @Sendable () throws -> Bool
    }

    static let checks: [Check] = [
        Check(name: "secp256k1: 3·G equals the known point") {
            try Secp256k1.Point(base: Secp256k1.Scalar(3)).compressed()
                == Hex.decode("02f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9")
        },
        Check(name: "secp256k1: a·a⁻¹ = 1 for a random a") {
            let a = Secp256k1.Scalar.random()
            return try a * a.inverse() == .one
        },
        Check(name: "secp256k1: ECDSA sign, verify, recover") {
            let key = Secp256k1.Scalar.random()
            let hash = SHA256.hash(Array("silentshard".utf8))
            let signature = try Secp256k1.ECDSA.sign(hash: hash, privateKey: key)
            let publicKey = Secp256k1.Point(base: key)
            let recovered = try Secp256k1.ECDSA.recoverPublicKey(signature, hash: hash)
            return Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: publicKey) && recovered == publicKey
        },
        Check(name: "Ed25519: RFC 8032 test 1") {
            let key = try Ed25519.SigningKey(seed: Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
            return try key.signature(for: []) == Hex.decode(
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        },
        Check(name: "X25519: both sides agree") {
            let a = X25519.PrivateKey(), b = X25519.PrivateKey()
            return try a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey)
        },
        Check(name: "ChaCha20-Poly1305: seal, open, reject tampering") {
            let key = SecureRandom.bytes(count: 32), nonce = SecureRandom.bytes(count: 12)
            var sealed = try ChaCha20Poly1305.seal(Array("share".utf8), key: key, nonce: nonce)
            let opened = try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce)
            sealed[0] ^= 1
            return opened == Array("share".utf8) && (try? ChaCha20Poly1305.open(sealed, key: key, nonce: nonce)) == nil
        },
        Check(name: "P-256: sign and verify") {
            let key = P256.SigningKey()
            let signature = try key.signature(for: Array("setup".utf8))
            return key.verifyingKey.isValidSignature(signature, for: Array("setup".utf8))
        },
        Check(name: "DKLs23 spec Appendix A: H(\"kat\"; \"abc\")") {
            try DomainHash(protocolLabel: "SilentShard-DKLs23-v1").hash("kat", Array("abc".utf8))
                == Hex.decode("f56af0fc409bba098f3743af91c0fbf8a7f1726b85b2477c9d8971626b210083")
        },
    ]

    /// Runs every check, prints one line each, and returns whether all passed.
    static func run() -> Bool {
        var failures = 0
        for check in checks {
            let passed: Bool
            do { passed = try check.run() } catch { passed = false }
            print("\(passed ? "ok  " : "FAIL") \(check.name)")
            if !passed { failures += 1 }
        }
        print("\(checks.count - failures) passed, \(failures) failed")
        return failures == 0
    }
}
