import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// DKLs23 threshold ECDSA, run with every party in this process (seeded), for independent checks of
/// the signatures and of soft derivation by Python libraries.
enum DKLsOperations {
    /// `{n, t, seed, signers: [int], path, hashes: [hex]}` → the public key, root chain code, derived
    /// key and one `{r, s, v}` signature per 32-byte hash (each from a fresh presign + finish).
    static func sign(_ input: CaseInput) throws -> JSONValue {
        let n = try input.int("n", in: 2...7)
        let t = try input.int("t", in: 2...n)
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let signers = try input.ints("signers", in: 0...(n - 1)).map { PartyIndex($0) }
        let path = try DerivationPath(input.optionalString("path") ?? "m")
        let keyshares = try DKLsInProcess.keygen(partyCount: n, threshold: t, using: &rng)
        let chosen = signers.map { keyshares[Int($0)] }
        let derived = try path.derive(publicKey: keyshares[0].publicKey, chainCode: keyshares[0].rootChainCode)
        var signatures: [JSONValue] = []
        for hash in try input.byteArrays("hashes") {
            let signature = try DKLsInProcess.sign(chosen, messageHash: hash, path: path, using: &rng)
            signatures.append(.object([
                "r": .hex(signature.r), "s": .hex(signature.s), "v": .int(Int(signature.recoveryId)),
                "der": .hex(signature.der),
            ]))
        }
        return .object([
            "publicKey": .hex(try keyshares[0].publicKey.compressed()),
            "chainCode": .hex(keyshares[0].rootChainCode),
            "derivedKey": .hex(try derived.publicKey.compressed()),
            "derivedChainCode": .hex(derived.chainCode),
            "signatures": .array(signatures),
        ])
    }

    /// `{publicKey, chainCode, path}` → BIP32 CKDpub: the child key and chain code.
    static func derive(_ input: CaseInput) throws -> JSONValue {
        let key = try Secp256k1.Point(bytes: input.bytes("publicKey"))
        let derived = try DerivationPath(input.string("path")).derive(publicKey: key, chainCode: input.bytes("chainCode"))
        return .object(["publicKey": .hex(try derived.publicKey.compressed()), "chainCode": .hex(derived.chainCode)])
    }
}
