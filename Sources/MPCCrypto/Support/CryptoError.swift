/// Every failure of the primitive layer. Cases carry no secret material.
public enum CryptoError: Error, Equatable, Sendable {
    /// A byte string had the wrong length for the value it encodes.
    case invalidLength(expected: Int, actual: Int)
    /// A scalar encoding is not in `[0, order)`.
    case scalarOutOfRange
    /// A scalar is zero where a non-zero value is required.
    case zeroScalar
    /// A point encoding is malformed: wrong prefix, non-canonical, or not on the curve.
    case invalidPointEncoding
    /// The identity point appeared where it is not allowed (it has no encoding on secp256k1).
    case identityPoint
    /// An Ed25519 encoding is not a canonical encoding of a point of the prime-order subgroup: not
    /// on the curve, non-canonical, of small order, or with a torsion component (libsodium's
    /// `crypto_core_ed25519_is_valid_point` does not say which).
    case pointNotInPrimeOrderSubgroup
    /// An AEAD tag did not verify: the ciphertext, the associated data or the key is wrong.
    case authenticationFailed
    /// A signature is malformed (bad DER, wrong length, component out of range).
    case invalidSignatureEncoding
    /// A private or public key is malformed or out of range.
    case invalidKey
    /// An X25519 exchange produced the all-zero secret (the peer sent a small-order point).
    case weakSharedSecret
    /// A hexadecimal string is malformed.
    case invalidHex
    /// A hash-to-curve attempt found no point (probability 2^-256).
    case hashToCurveFailed
    /// The underlying C library reported a failure that valid inputs cannot cause.
    case libraryFailure(String)
}
