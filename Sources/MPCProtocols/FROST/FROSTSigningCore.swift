import MPCCrypto

// FROST(Ed25519, SHA-512) as an instance of the generic core (FROSTCore.swift). Today's names
// (`FROST.SigningNonces`, `FROST.SigningCommitment`, `FROST.SigningPackage`) are that instance, so
// every caller, vector and byte on the wire is unchanged. The state machine in FROSTSigning.swift
// wraps them; the test vectors drive them directly.

extension Ed25519.Scalar: FROSTScalar {}
extension Ed25519.Point: FROSTElement {}

extension FROST {
    /// RFC 9591 §6.1 FROST(Ed25519, SHA-512): the ciphersuite of every `FROST` type.
    public enum Ed25519SHA512: FROSTCiphersuite {
        public typealias Scalar = Ed25519.Scalar
        public typealias Element = Ed25519.Point

        public static var contextString: [UInt8] { FROST.contextString }
        public static var elementByteCount: Int { 32 }
        public static var scalarByteCount: Int { 32 }

        /// The RFC 8032 encoding; the identity has one here (01 00…00) and it is accepted, as before.
        public static func serialize(_ element: Element) throws(CryptoError) -> [UInt8] { element.bytes }
        public static func deserializeElement(_ bytes: [UInt8]) throws(CryptoError) -> Element { try Element(bytes: bytes) }
        public static func serialize(_ scalar: Scalar) -> [UInt8] { scalar.bytes }
        public static func deserializeScalar(_ bytes: [UInt8]) throws(CryptoError) -> Scalar { try Scalar(bytes: bytes) }

        public static func h1(_ m: [UInt8]) -> Scalar { FROST.h1(m) }
        public static func h2(_ m: [UInt8]) -> Scalar { FROST.h2(m) }
        public static func h3(_ m: [UInt8]) -> Scalar { FROST.h3(m) }
        public static func h4(_ m: [UInt8]) -> [UInt8] { FROST.h4(m) }
        public static func h5(_ m: [UInt8]) -> [UInt8] { FROST.h5(m) }

        /// RFC 8032 verification by libsodium.
        public static func verify(signature: [UInt8], message: [UInt8], groupKey: Element) -> Bool {
            guard let key = try? Ed25519.VerifyingKey(bytes: groupKey.bytes) else { return false }
            return key.isValidSignature(signature, for: message)
        }

        /// The cached `FROST.lagrange`.
        public static func lagrange(_ identifier: Identifier, over set: [Identifier], at x: Scalar) throws(ProtocolError) -> Scalar {
            try FROST.lagrange(identifier, over: set, at: x)
        }
    }

    /// A signer's secret nonce pair (hiding d, binding e). Never printed.
    public typealias SigningNonces = FROSTCore<Ed25519SHA512>.SigningNonces
    /// A participant's round-one output (identifier, D, E); public.
    public typealias SigningCommitment = FROSTCore<Ed25519SHA512>.SigningCommitment
    /// Binding factors, group commitment and challenge for one signing (RFC 9591 §4.4–§4.6).
    public typealias SigningPackage = FROSTCore<Ed25519SHA512>.SigningPackage
}
