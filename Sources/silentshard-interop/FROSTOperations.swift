import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// FROST(Ed25519, SHA-512): whole protocol runs in one process (all parties), for the pytest
/// checks against `cryptography` (RFC 8032 verification) and bip-utils (BIP32-Ed25519 public derivation).
enum FROSTOperations {
    /// `{seed, threshold, parties, message, signers?, path?, importSeed? | importScalar?, chainCode?,
    /// importer?, refresh?}` → `{publicKey, chainCode, derivedPublicKey, signature, signers, exported}`.
    ///
    /// `seed` (32 bytes) drives every party's randomness. Without an import field the key comes from
    /// a DKG; `refresh` runs a refresh before signing; `exported` is the secret reconstructed from t shares.
    static func sign(_ input: CaseInput) throws -> JSONValue {
        var rng = try DeterministicRandom(seed: input.bytes("seed"))
        let t = UInt8(try input.int("threshold", in: 2...255))
        let n = UInt8(try input.int("parties", in: Int(t)...255))
        let message = try input.bytes("message")
        let path = try FROST.Derivation.parse(try input.optionalString("path") ?? "m")
        var signers = (0..<t).map { $0 }
        if let text = try input.optionalString("signers") {
            signers = try text.split(separator: ",").map { part throws(InteropError) -> PartyIndex in
                guard let value = UInt8(part), value < n else { throw .outOfRange(field: "signers") }
                return value
            }
        }
        let sessionId = rng.randomBytes(count: 32)
        var shares: [FROST.Keyshare]
        var importedSecret: Ed25519.Scalar?
        if let seed = try input.optionalBytes("importSeed") {
            importedSecret = try FROST.secretScalar(fromSeed: seed)
        } else if let raw = try input.optionalBytes("importScalar") {
            importedSecret = try Ed25519.Scalar(nonZeroBytes: raw)
        }
        if let secret = importedSecret {
            let importer = UInt8(try input.optionalInt("importer", in: 0...Int(n) - 1) ?? 0)
            let chainCode = try input.optionalBytes("chainCode") ?? [UInt8](repeating: 0, count: 32)
            let publicKey = Ed25519.Point(base: secret)
            var setups: [FROST.ImportedKey] = []
            for i in 0..<n {
                setups.append(try FROST.ImportedKey(importer: importer, publicKey: publicKey, chainCode: chainCode,
                                                    secret: i == importer ? secret : nil))
            }
            shares = try FROST.LocalRun.keyGeneration(threshold: t, parties: n, sessionId: sessionId,
                                                      mode: { .importKey(setups[Int($0)]) }, using: &rng)
        } else {
            shares = try FROST.LocalRun.keyGeneration(threshold: t, parties: n, sessionId: sessionId,
                                                      mode: { _ in .keygen }, using: &rng)
        }
        if case .bool(true)? = input.value["refresh"] {
            let old = shares
            shares = try FROST.LocalRun.keyGeneration(threshold: t, parties: n, sessionId: rng.randomBytes(count: 32),
                                                      mode: { .refresh(old[Int($0)]) }, using: &rng)
        }
        let signature = try FROST.LocalRun.sign(shares, signers: signers, message: message, path: path, using: &rng)
        let derived = try FROST.derivePublicKey(shares[0], path: path)
        var exportMessages: [PartyIndex: [UInt8]] = [:]
        for k in 1..<t { exportMessages[k] = FROST.Export.shareMessage(shares[Int(k)]) }
        let exported = try FROST.Export.reconstruct(shares[0], messages: exportMessages)
        return .object([
            "publicKey": .hex(shares[0].publicKey.bytes),
            "chainCode": .hex(shares[0].chainCode),
            "derivedPublicKey": .hex(derived.publicKey.bytes),
            "signature": .hex(signature),
            "signers": .array(signers.map { .int(Int($0)) }),
            "exported": .hex(exported.bytes),
        ])
    }

    /// `{publicKey, chainCode, path}` → `{publicKey, chainCode, tweak}` (BIP32-Ed25519 public derivation).
    static func derive(_ input: CaseInput) throws -> JSONValue {
        let key = try Ed25519.Point(bytes: input.bytes("publicKey"))
        let derived = try FROST.Derivation(publicKey: key, chainCode: input.bytes("chainCode"),
                                           path: FROST.Derivation.parse(input.string("path")))
        return .object([
            "publicKey": .hex(derived.publicKey.bytes),
            "chainCode": .hex(derived.chainCode),
            "tweak": .hex(derived.tweak.bytes),
        ])
    }
}
