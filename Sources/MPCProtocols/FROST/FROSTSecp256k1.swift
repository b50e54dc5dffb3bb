import MPCCrypto

extension Secp256k1.Scalar: FROSTScalar {}
extension Secp256k1.Point: FROSTElement {}

/// What every FROST ciphersuite over secp256k1 with SHA-256 shares (RFC 9591 §6.5; the BIP340 variant
/// keeps it under its own context string): encodings and H1, H3, H4, H5. A suite adds its context
/// string, H2 and whatever it overrides of `FROSTCiphersuite`'s defaults.
public protocol FROSTSecp256k1SHA256Family: FROSTCiphersuite
where Scalar == Secp256k1.Scalar, Element == Secp256k1.Point {}

extension FROSTSecp256k1SHA256Family {
    public static var elementByteCount: Int { 33 }
    public static var scalarByteCount: Int { 32 }

    public static func serialize(_ element: Element) throws(CryptoError) -> [UInt8] { try element.compressed() }
    /// 33 bytes, prefix 0x02/0x03, x < p, on the curve (libsecp256k1 `ec_pubkey_parse`); never the identity.
    public static func deserializeElement(_ bytes: [UInt8]) throws(CryptoError) -> Element { try Element(compressed: bytes) }
    public static func serialize(_ scalar: Scalar) -> [UInt8] { scalar.bytes }
    public static func deserializeScalar(_ bytes: [UInt8]) throws(CryptoError) -> Scalar { try Scalar(bytes: bytes) }

    public static func h1(_ m: [UInt8]) -> Scalar { FROSTSecp256k1.hashToScalar(m, dst: contextString + Array("rho".utf8)) }
    public static func h3(_ m: [UInt8]) -> Scalar { FROSTSecp256k1.hashToScalar(m, dst: contextString + Array("nonce".utf8)) }
    public static func h4(_ m: [UInt8]) -> [UInt8] { SHA256.hash(contextString + Array("msg".utf8) + m) }
    public static func h5(_ m: [UInt8]) -> [UInt8] { SHA256.hash(contextString + Array("com".utf8) + m) }
}

/// RFC 9591 §6.5 FROST(secp256k1, SHA-256): 33-byte compressed SEC1 elements (the identity has no
/// encoding), 32-byte big-endian scalars, H1–H3 = RFC 9380 `hash_to_field` (expand_message_xmd
/// with SHA-256, L = 48, reduced mod n), H4/H5 = SHA-256 with the context string. Point arithmetic
/// is libsecp256k1's (MPCCrypto's `Secp256k1.Point`), scalars MPCCrypto's constant-time
/// `Secp256k1.Scalar`. Signatures are enc(R) ‖ enc(z), 65 bytes, verified per RFC 9591 Appendix B.
public enum FROSTSecp256k1: FROSTSecp256k1SHA256Family {
    public typealias Scalar = Secp256k1.Scalar
    public typealias Element = Secp256k1.Point

    /// RFC 9591 §6.5 contextString.
    public static let contextString: [UInt8] = Array("FROST-secp256k1-SHA256-v1".utf8)
    public static func h2(_ m: [UInt8]) -> Scalar { FROSTSecp256k1.hashToScalar(m, dst: contextString + Array("chal".utf8)) }

    /// `hash_to_field(m, 1)` with the given DST. The DSTs here are fixed and short and L = 48, so
    /// `expand_message_xmd`'s length checks cannot fail.
    static func hashToScalar(_ m: [UInt8], dst: [UInt8]) -> Scalar {
        (try? Secp256k1.hashToScalar(m, dst: dst)) ?? .zero
    }

    /// A signer's secret nonce pair.
    public typealias SigningNonces = FROSTCore<FROSTSecp256k1>.SigningNonces
    /// A participant's round-one output (identifier, D, E).
    public typealias SigningCommitment = FROSTCore<FROSTSecp256k1>.SigningCommitment
    /// Binding factors, group commitment and challenge for one signing.
    public typealias SigningPackage = FROSTCore<FROSTSecp256k1>.SigningPackage
}
