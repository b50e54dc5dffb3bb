import Foundation
import MPCCrypto

/// A finished threshold signature.
///
/// * ECDSA (secp256k1): `r`, `s` (32 bytes each, low-S), `recoveryId` (0…3); `der` and the 65-byte
///   `r ‖ s ‖ v` form (`recoverable`).
/// * EdDSA (Ed25519): the 64-byte signature `R ‖ S` (`rawRepresentation`).
public struct Signature: Sendable, Equatable, CustomStringConvertible {
    /// The scheme.
    public let algorithm: Keyshare.Algorithm
    /// ECDSA: `r ‖ s` (64 bytes); EdDSA: `R ‖ S` (64 bytes).
    public let rawRepresentation: Data
    /// ECDSA recovery id (0…3); nil for EdDSA.
    public let recoveryId: UInt8?

    /// An ECDSA signature. `r` and `s` must be 32 bytes each, `recoveryId` ≤ 3.
    public init(r: Data, s: Data, recoveryId: UInt8) throws(SilentShardError) {
        guard r.count == 32, s.count == 32, recoveryId <= 3 else { throw .invalidInput(reason: "ECDSA signature encoding") }
        algorithm = .ecdsa
        rawRepresentation = r + s
        self.recoveryId = recoveryId
    }

    /// An EdDSA signature (64 bytes).
    public init(eddsa bytes: Data) throws(SilentShardError) {
        guard bytes.count == 64 else { throw .invalidInput(reason: "EdDSA signature must be 64 bytes") }
        algorithm = .eddsa
        rawRepresentation = bytes
        recoveryId = nil
    }

    /// Wraps a protocol ECDSA signature.
    public init(ecdsa signature: Secp256k1.ECDSASignature) {
        algorithm = .ecdsa
        rawRepresentation = Data(signature.r + signature.s)
        recoveryId = signature.recoveryId
    }

    /// ECDSA r (32 bytes); nil for EdDSA.
    public var r: Data? { algorithm == .ecdsa ? rawRepresentation.prefix(32) : nil }
    /// ECDSA s (32 bytes); nil for EdDSA.
    public var s: Data? { algorithm == .ecdsa ? rawRepresentation.suffix(32) : nil }

    /// ECDSA `r ‖ s ‖ recoveryId` (65 bytes); nil for EdDSA.
    public var recoverable: Data? {
        guard algorithm == .ecdsa, let recoveryId else { return nil }
        return rawRepresentation + [recoveryId]
    }

    /// ECDSA DER encoding; nil for EdDSA.
    public var der: Data? {
        guard algorithm == .ecdsa, let r, let s,
              let signature = try? Secp256k1.ECDSASignature(r: Array(r), s: Array(s), recoveryId: recoveryId ?? 0)
        else { return nil }
        return Data(signature.der)
    }

    public var description: String {
        "Signature(\(algorithm), \(Hex.encode(Array(rawRepresentation))))"
    }
}
