import MPCCrypto

/// FROST over secp256k1 producing BIP340 Schnorr signatures (Bitcoin Taproot key-path spends);
/// SilentShard's variant of RFC 9591 §6.5, docs/protocol/frost.md §18.3.
///
/// Differences from ``FROSTSecp256k1`` (everything else — encodings of commitments on the wire,
/// H1/H3/H4/H5 as RFC 9380 / SHA-256 constructions — is the same, under its own context string):
/// * challenge c = int(tagged_hash("BIP0340/challenge", bytes(R) ‖ bytes(PK) ‖ m)) mod n (x-only);
/// * when R = Σ D_i + ρ_i·E_i has odd y, every signer uses −(d_i + ρ_i·e_i) and share verification
///   −(D_i + ρ_i·E_i), so the aggregate signs for the even-y lift of R.x;
/// * the signature is bytes(R) ‖ bytes(z), 64 bytes, verified by libsecp256k1 `schnorrsig_verify`;
/// * the group key must have even y: ``SigningKey`` turns a DKG key P (and an optional BIP341
///   TapTweak) into the key signers sign under and maps each secret/verifying share to it.
public enum FROSTSecp256k1BIP340: FROSTSecp256k1SHA256Family {
    public typealias Scalar = Secp256k1.Scalar
    public typealias Element = Secp256k1.Point

    /// The context string of H1, H3, H4, H5 (SilentShard's choice; the "TR" suffix names the
    /// Taproot variant, as ZcashFoundation's frost-secp256k1-tr does; its published signing vector
    /// passes byte for byte, `FROSTSecp256k1BIP340Tests.zcashFoundationSecp256k1TRVector`).
    public static let contextString: [UInt8] = Array("FROST-secp256k1-SHA256-TR-v1".utf8)
    /// The BIP340 challenge hash: int(tagged_hash("BIP0340/challenge", m)) mod n.
    public static func h2(_ m: [UInt8]) -> Scalar {
        // A 32-byte input always reduces.
        (try? Scalar(reducing: Secp256k1.taggedHash("BIP0340/challenge", m))) ?? .zero
    }

    /// BIP340: c = H2(bytes(R) ‖ bytes(PK) ‖ m), x coordinates only.
    public static func challenge(groupCommitment: Element, groupKey: Element, message: [UInt8]) throws(CryptoError) -> Scalar {
        h2(try groupCommitment.xOnly() + (try groupKey.xOnly()) + message)
    }

    /// R of odd y: the signers negate their nonce terms (R is public).
    public static func negatesNonces(groupCommitment: Element) -> Bool { !groupCommitment.hasEvenY }

    /// BIP340 signs under the even-y lift of the x-only key: a group key of odd y (a raw DKG key not
    /// passed through ``SigningKey``) is refused, so signers and aggregator cannot disagree on it.
    public static func acceptsGroupKey(_ groupKey: Element) -> Bool { !groupKey.isIdentity && groupKey.hasEvenY }

    /// bytes(R): the x coordinate.
    public static func signatureCommitment(_ groupCommitment: Element) throws(CryptoError) -> [UInt8] {
        try groupCommitment.xOnly()
    }

    /// libsecp256k1 `secp256k1_schnorrsig_verify` against bytes(PK).
    public static func verify(signature: [UInt8], message: [UInt8], groupKey: Element) -> Bool {
        guard let key = try? groupKey.xOnly() else { return false }
        return Secp256k1.verifySchnorr(signature: signature, message: message, xOnlyKey: key)
    }

    /// A signer's secret nonce pair.
    public typealias SigningNonces = FROSTCore<FROSTSecp256k1BIP340>.SigningNonces
    /// A participant's round-one output (identifier, D, E).
    public typealias SigningCommitment = FROSTCore<FROSTSecp256k1BIP340>.SigningCommitment
    /// Binding factors, group commitment and challenge for one signing.
    public typealias SigningPackage = FROSTCore<FROSTSecp256k1BIP340>.SigningPackage
}
