import CSecp256k1
import MPCCrypto

/// Benchmarks of the primitive layer, with libsecp256k1 baselines run in the same process.
enum PrimitiveBenchmarks {
    static func run(harness: Harness) throws {
        try secp256k1(harness)
        try ed25519(harness)
        try symmetric(harness)
    }

    static func secp256k1(_ harness: Harness) throws {
        typealias Scalar = Secp256k1.Scalar
        var rng = DeterministicRandom(seed: 1)
        let a = Scalar.random(using: &rng), b = Scalar.random(using: &rng)
        let point = Secp256k1.Point(base: a), other = Secp256k1.Point(base: b)
        let hash = rng.randomBytes(count: 32)
        guard let context = secp256k1_context_create(silentshard_secp256k1_context_none()) else {
            throw CryptoError.libraryFailure("secp256k1_context_create")
        }
        defer { secp256k1_context_destroy(context) }
        let aBytes = a.bytes, bBytes = b.bytes
        var results: [Harness.Result] = []
        // Chained so that every operation depends on the previous one (nothing can be hoisted).
        var accumulator = a
        results.append(harness.measure("scalar mul (pure Swift)") { accumulator = accumulator * b })
        results.append(harness.measure("scalar mul (libsecp256k1 seckey_tweak_mul)") {
            var product = aBytes
            _ = secp256k1_ec_seckey_tweak_mul(context, &product, bBytes)
            blackHole(product)
        })
        results.append(harness.measure("scalar add (pure Swift)") { accumulator = accumulator + b })
        results.append(harness.measure("scalar inverse (pure Swift, constant time)") {
            accumulator = (try? accumulator.inverse()) ?? b
        })
        blackHole(accumulator)
        results.append(harness.measure("scalar decode+encode") { blackHole((try? Scalar(bytes: aBytes))?.bytes) })
        results.append(harness.measure("base multiply k·G") { blackHole(Secp256k1.Point(base: a)) })
        results.append(harness.measure("variable-base multiply k·P (ECDH, constant time)") { blackHole(b * point) })
        results.append(harness.measure("variable-base multiply (libsecp256k1 pubkey_tweak_mul, variable time)") {
            var key = secp256k1_pubkey()
            var encoded = (try? point.compressed()) ?? []
            _ = secp256k1_ec_pubkey_parse(context, &key, &encoded, 33)
            _ = secp256k1_ec_pubkey_tweak_mul(context, &key, bBytes)
            blackHole(key)
        })
        results.append(harness.measure("point add") { blackHole(point + other) })
        results.append(harness.measure("point compress") { blackHole(try? point.compressed()) })
        results.append(harness.measure("point decompress (decode + validate)") {
            blackHole(try? Secp256k1.Point(bytes: (try? point.compressed()) ?? []))
        })
        results.append(harness.measure("ECDSA sign (libsecp256k1, single party)") {
            blackHole(try? Secp256k1.ECDSA.sign(hash: hash, privateKey: a))
        })
        let signature = try Secp256k1.ECDSA.sign(hash: hash, privateKey: a)
        results.append(harness.measure("ECDSA verify (libsecp256k1)") {
            blackHole(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: point))
        })
        printTable("secp256k1", results, baselines: [
            "scalar mul (pure Swift)": "scalar mul (libsecp256k1 seckey_tweak_mul)",
            "variable-base multiply k·P (ECDH, constant time)":
                "variable-base multiply (libsecp256k1 pubkey_tweak_mul, variable time)",
        ])
    }

    static func ed25519(_ harness: Harness) throws {
        typealias Scalar = Ed25519.Scalar
        var rng = DeterministicRandom(seed: 2)
        let a = Scalar.random(using: &rng), b = Scalar.random(using: &rng)
        let point = Ed25519.Point(base: a), other = Ed25519.Point(base: b)
        let key = try Ed25519.SigningKey(seed: rng.randomBytes(count: 32))
        let message = rng.randomBytes(count: 32)
        let signature = key.signature(for: message)
        var results: [Harness.Result] = []
        var accumulator = a
        results.append(harness.measure("scalar mul") { accumulator = accumulator * b })
        results.append(harness.measure("scalar add") { accumulator = accumulator + b })
        results.append(harness.measure("scalar inverse") { accumulator = (try? accumulator.inverse()) ?? b })
        blackHole(accumulator)
        results.append(harness.measure("base multiply k·B") { blackHole(Ed25519.Point(base: a)) })
        results.append(harness.measure("variable-base multiply k·P") { blackHole(b * point) })
        results.append(harness.measure("point add") { blackHole(point + other) })
        results.append(harness.measure("point decode + validate") { blackHole(try? Ed25519.Point(bytes: point.bytes)) })
        results.append(harness.measure("Ed25519 sign (32-byte message)") { blackHole(key.signature(for: message)) })
        results.append(harness.measure("Ed25519 verify") { blackHole(key.verifyingKey.isValidSignature(signature, for: message)) })
        printTable("Ed25519", results)
    }

    static func symmetric(_ harness: Harness) throws {
        let size = 1 << 20
        let data = [UInt8](repeating: 0x5A, count: size)
        let prg = try AESPRG(seed: [UInt8](repeating: 1, count: 32))
        var buffer = [UInt8](repeating: 0, count: size)
        let key = [UInt8](repeating: 2, count: 32), nonce = [UInt8](repeating: 3, count: 12)
        let small = [UInt8](repeating: 7, count: 64)
        let x25519Key = try X25519.PrivateKey(rawRepresentation: key)
        let x25519Peer = try X25519.PrivateKey(rawRepresentation: Array(small.prefix(32))).publicKey
        let domain = DomainHash(protocolLabel: "SilentShard-DKLs23-v1")
        var results: [Harness.Result] = []
        results.append(harness.measure("AES-256-CTR PRG, 1 MiB", bytes: size) {
            buffer.withUnsafeMutableBytes { prg.fill($0) }
            blackHole(buffer[0])
        })
        results.append(harness.measure("SHA-256, 1 MiB", bytes: size) { blackHole(SHA256.hash(data)) })
        results.append(harness.measure("SHA-512, 1 MiB", bytes: size) { blackHole(SHA512.hash(data)) })
        results.append(harness.measure("ChaCha20-Poly1305 seal, 1 MiB", bytes: size) {
            blackHole(try? ChaCha20Poly1305.seal(data, key: key, nonce: nonce))
        })
        results.append(harness.measure("SHA-256, 64 bytes") { blackHole(SHA256.hash(small)) })
        results.append(harness.measure("HMAC-SHA512, 64 bytes") { blackHole(SHA512.hmac(key: key, data: small)) })
        results.append(harness.measure("DomainHash H (tag + 2 fields of 32 bytes)") {
            blackHole(domain.hash("kat", key, key))
        })
        results.append(harness.measure("X25519 shared secret") {
            blackHole(try? x25519Key.sharedSecret(with: x25519Peer))
        })
        printTable("Symmetric primitives", results)
    }
}
