import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// FROST over secp256k1 with BIP340 signatures (docs/protocol/frost.md §18.3): a dealer split and a
/// threshold signing in one process, for the pytest checks against coincurve (BIP340 verification,
/// BIP341 tweak) and embit (P2TR output key).
enum FROSTSecp256k1Operations {
    /// `{seed, threshold, parties, message, signers?, taproot?, merkleRoot?}` →
    /// `{groupKey (33 B), internalKey, outputKey (x-only), tweak, signature}`.
    static func bip340Sign(_ input: CaseInput) throws -> JSONValue {
        var rng = try DeterministicRandom(seed: input.bytes("seed"))
        let t = try input.int("threshold", in: 2...255)
        let n = try input.int("parties", in: t...255)
        let message = try input.bytes("message")
        var signers = (0..<t).map { FROST.Identifier(party: PartyIndex($0)) }
        if let text = try input.optionalString("signers") {
            signers = try text.split(separator: ",").map { part throws(InteropError) -> FROST.Identifier in
                guard let value = UInt8(part), Int(value) < n else { throw .outOfRange(field: "signers") }
                return FROST.Identifier(party: value)
            }
        }
        let merkleRoot = try input.optionalBytes("merkleRoot")
        let taprootFlag = try input.optionalString("taproot")
        let taproot = merkleRoot != nil || taprootFlag == "yes"
        let (groupKey, shares) = FROSTCore<FROSTSecp256k1BIP340>.dealerSplit(threshold: t, parties: n, using: &rng)
        let key = try FROSTSecp256k1BIP340.SigningKey(groupKey: groupKey,
                                                      tweak: taproot ? .taproot(merkleRoot: merkleRoot) : .none)
        let signature = try FROSTCore<FROSTSecp256k1BIP340>.localSign(
            message: message, signers: signers, shares: shares, groupKey: key.key,
            effectiveShare: key.signingShare, effectiveVerifyingShare: key.verifyingShare, using: &rng)
        return .object([
            "groupKey": .string(Hex.encode(try groupKey.compressed())),
            "internalKey": .string(Hex.encode(try key.internalKey.xOnly())),
            "outputKey": .string(Hex.encode(key.xOnlyKey)),
            "tweak": .string(Hex.encode(key.tweak.bytes)),
            "signature": .string(Hex.encode(signature)),
        ])
    }
}
