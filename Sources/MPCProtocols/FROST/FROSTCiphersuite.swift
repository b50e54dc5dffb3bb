import MPCCrypto

// RFC 9591 §6 ciphersuites: the group (element and scalar types with their encodings) and the hash
// functions H1–H5. The FROST core (`FROSTCore`, FROSTCore.swift) is written once over this protocol;
// docs/protocol/frost.md §18 lists the instances (Ed25519, secp256k1, secp256k1 BIP340).

/// A scalar of a ciphersuite's prime-order group (Z_q). Arithmetic must run in time independent of
/// the values (secret shares and nonces go through it); `description` must never show the value.
public protocol FROSTScalar: Sendable, Equatable, CustomStringConvertible {
    static var zero: Self { get }
    static var one: Self { get }
    /// A small constant (identifiers).
    init(_ value: UInt64)
    var isZero: Bool { get }
    static func + (a: Self, b: Self) -> Self
    static func - (a: Self, b: Self) -> Self
    static func * (a: Self, b: Self) -> Self
    static prefix func - (a: Self) -> Self
    /// The multiplicative inverse; zero has none.
    func inverse() throws(CryptoError) -> Self
    /// A uniformly random non-zero scalar.
    static func random<R: RandomNumberGenerator>(using rng: inout R) -> Self
}

/// An element of a ciphersuite's prime-order group. Multiplication by a scalar must be constant time
/// in the scalar (it is used with secret scalars for the base point).
public protocol FROSTElement: Sendable, Equatable {
    associatedtype Scalar: FROSTScalar
    static var identity: Self { get }
    var isIdentity: Bool { get }
    /// scalar·G.
    init(base scalar: Scalar)
    static func + (lhs: Self, rhs: Self) -> Self
    static prefix func - (point: Self) -> Self
    static func * (scalar: Scalar, point: Self) -> Self
}

/// A FROST ciphersuite (RFC 9591 §6): group, encodings, H1–H5, and the few places where a variant
/// (BIP340) departs from the RFC's generic Schnorr: the challenge, the signature's R encoding,
/// the parity rule for R, and verification.
public protocol FROSTCiphersuite: Sendable {
    associatedtype Scalar: FROSTScalar
    associatedtype Element: FROSTElement where Element.Scalar == Scalar

    /// RFC 9591 §6 `contextString`.
    static var contextString: [UInt8] { get }
    /// Ne: bytes of an encoded element.
    static var elementByteCount: Int { get }
    /// Ns: bytes of an encoded scalar.
    static var scalarByteCount: Int { get }

    /// `SerializeElement` (fails for the identity where the group has no encoding for it).
    static func serialize(_ element: Element) throws(CryptoError) -> [UInt8]
    /// `DeserializeElement` for bytes from outside: rejects wrong lengths, non-canonical encodings,
    /// points off the curve or outside the prime-order group, and the identity.
    static func deserializeElement(_ bytes: [UInt8]) throws(CryptoError) -> Element
    /// `SerializeScalar`.
    static func serialize(_ scalar: Scalar) -> [UInt8]
    /// `DeserializeScalar` for bytes from outside: rejects wrong lengths and values ≥ q.
    static func deserializeScalar(_ bytes: [UInt8]) throws(CryptoError) -> Scalar

    /// H1 (binding factors), H2 (challenge hash), H3 (nonces), H4 (message), H5 (commitment list).
    static func h1(_ m: [UInt8]) -> Scalar
    static func h2(_ m: [UInt8]) -> Scalar
    static func h3(_ m: [UInt8]) -> Scalar
    static func h4(_ m: [UInt8]) -> [UInt8]
    static func h5(_ m: [UInt8]) -> [UInt8]

    /// The Schnorr challenge c for group commitment R and group key PK (RFC 9591 §4.6:
    /// H2(enc(R) ‖ enc(PK) ‖ m); BIP340 overrides it).
    static func challenge(groupCommitment: Element, groupKey: Element, message: [UInt8]) throws(CryptoError) -> Scalar
    /// Whether the signers must use −(d + ρe) and the verifier −R for this R (BIP340: R of odd y).
    /// R is public, so the answer may be computed in variable time.
    static func negatesNonces(groupCommitment: Element) -> Bool
    /// The R part of the signature (RFC 9591 Appendix A: enc(R); BIP340: the x coordinate).
    static func signatureCommitment(_ groupCommitment: Element) throws(CryptoError) -> [UInt8]
    /// Signature verification (RFC 9591 Appendix B, or the suite's native verifier).
    static func verify(signature: [UInt8], message: [UInt8], groupKey: Element) -> Bool
    /// λ_i^S(x) (RFC 9591 §4.2); a suite may cache it.
    static func lagrange(_ identifier: FROST.Identifier, over set: [FROST.Identifier], at x: Scalar) throws(ProtocolError) -> Scalar
}

extension FROSTCiphersuite {
    public static func challenge(groupCommitment: Element, groupKey: Element, message: [UInt8]) throws(CryptoError) -> Scalar {
        h2(try serialize(groupCommitment) + (try serialize(groupKey)) + message)
    }

    public static func negatesNonces(groupCommitment: Element) -> Bool { false }

    public static func signatureCommitment(_ groupCommitment: Element) throws(CryptoError) -> [UInt8] {
        try serialize(groupCommitment)
    }

    /// RFC 9591 Appendix B: z·G = R + c·PK, with R and z decoded strictly.
    public static func verify(signature: [UInt8], message: [UInt8], groupKey: Element) -> Bool {
        guard signature.count == elementByteCount + scalarByteCount,
              let r = try? deserializeElement(Array(signature.prefix(elementByteCount))),
              let z = try? deserializeScalar(Array(signature.dropFirst(elementByteCount))),
              let c = try? challenge(groupCommitment: r, groupKey: groupKey, message: message) else { return false }
        return Element(base: z) == r + c * groupKey
    }

    /// Π_{j≠i} (x − x_j)/(x_i − x_j), uncached. Duplicates or an identifier outside the set are
    /// `invalidInput`.
    public static func lagrange(_ identifier: FROST.Identifier, over set: [FROST.Identifier], at x: Scalar) throws(ProtocolError) -> Scalar {
        guard Set(set).count == set.count else { throw .invalidInput(.collidingEvaluationPoints) }
        guard set.contains(identifier) else { throw .invalidInput(.invalidParameters) }
        let xi = Scalar(UInt64(identifier.value))
        var numerator = Scalar.one
        var denominator = Scalar.one
        for other in set where other != identifier {
            let xj = Scalar(UInt64(other.value))
            numerator = numerator * (x - xj)
            denominator = denominator * (xi - xj)
        }
        do { return numerator * (try denominator.inverse()) } catch { throw .invalidInput(.collidingEvaluationPoints) }
    }
}
