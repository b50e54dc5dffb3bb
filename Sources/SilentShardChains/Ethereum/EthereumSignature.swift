import Foundation
import MPCCrypto
import SilentShardCore

/// An Ethereum ECDSA signature: `r`, `s` (low-S, as EIP-2 requires) and the y-parity of the nonce point.
/// `rsv` is the 65-byte `r ‖ s ‖ v` form of `personal_sign` and `eth_signTypedData` (v = 27 + yParity).
public struct EthereumSignature: Sendable, Equatable, CustomStringConvertible {
    public let r: Data
    public let s: Data
    /// 0 or 1.
    public let yParity: UInt8

    /// The SDK's ECDSA signature. Recovery ids 2 and 3 (r ≥ n, about 2⁻¹²⁸) and high S have no Ethereum
    /// form: `invalidSignature`.
    public init(_ signature: Signature) throws(ChainError) {
        guard signature.algorithm == .ecdsa, let r = signature.r, let s = signature.s, let recoveryId = signature.recoveryId else {
            throw .invalidSignature(reason: "not an ECDSA signature")
        }
        try self.init(r: r, s: s, yParity: recoveryId)
    }

    /// `r ‖ s ‖ v` (65 bytes) with v ∈ {27, 28} (or {0, 1}).
    public init(rsv: Data) throws(ChainError) {
        let bytes = [UInt8](rsv)
        guard bytes.count == 65 else { throw .invalidSignature(reason: "not 65 bytes") }
        let v = bytes[64]
        guard v == 27 || v == 28 || v == 0 || v == 1 else { throw .invalidSignature(reason: "v must be 27 or 28") }
        try self.init(r: Data(bytes[0..<32]), s: Data(bytes[32..<64]), yParity: v >= 27 ? v - 27 : v)
    }

    init(r: Data, s: Data, yParity: UInt8) throws(ChainError) {
        guard r.count == 32, s.count == 32, yParity <= 1 else { throw .invalidSignature(reason: "encoding") }
        guard let parsed = try? Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: yParity), parsed.isLowS else {
            throw .invalidSignature(reason: "r or s out of range, or high S")
        }
        self.r = r
        self.s = s
        self.yParity = yParity
    }

    /// `r ‖ s ‖ v`, v = 27 + yParity (65 bytes).
    public var rsv: Data { r + s + [27 + yParity] }

    /// The compressed public key that signed the 32-byte `hash`; `invalidSignature` if none does.
    public func recoverPublicKey(hash: Data) throws(ChainError) -> Data {
        guard hash.count == 32,
              let signature = try? Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: yParity),
              let key = try? Secp256k1.ECDSA.recoverPublicKey(signature, hash: [UInt8](hash)),
              let compressed = try? key.compressed()
        else { throw .invalidSignature(reason: "no public key recovers") }
        return Data(compressed)
    }

    /// The address that signed the 32-byte `hash`.
    public func recoverAddress(hash: Data) throws(ChainError) -> EthereumAddress {
        try EthereumAddress(publicKey: recoverPublicKey(hash: hash))
    }

    public var description: String { "EthereumSignature(0x\(Hex.encode([UInt8](rsv))))" }
}
