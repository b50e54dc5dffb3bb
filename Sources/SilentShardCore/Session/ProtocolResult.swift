import MPCCrypto

/// What a protocol run produces, in any mode: a keyshare, or a signature verified by the party that
/// computed it.
package enum ProtocolResult: Sendable {
    /// A new keyshare (keygen, refresh, recover, import, a hard-derived child).
    case keyshare(Keyshare)
    /// An ECDSA signature, verified under the derived public key.
    case ecdsaSignature(Secp256k1.ECDSASignature)
    /// A 64-byte Ed25519 signature, verified under the derived public key.
    case eddsaSignature([UInt8])
}
