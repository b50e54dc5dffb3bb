import Foundation
import MPCCrypto
import SilentShardCore

/// An ECDSA signature as Bitcoin scripts carry it: strict DER (BIP-66,
/// <https://github.com/bitcoin/bips/blob/master/bip-0066.mediawiki>) with low S (BIP-146's LOW_S policy)
/// followed by one sighash-type byte.
public struct BitcoinSignature: Sendable, Equatable {
    /// r, 32 bytes big-endian.
    public let r: Data
    /// s, 32 bytes big-endian, at most n/2.
    public let s: Data
    /// The sighash type byte (1 = SIGHASH_ALL).
    public let sighashType: UInt8

    /// The SDK's ECDSA signature, with S normalized to n − S when high (both verify; Bitcoin relays only
    /// low S).
    public init(_ signature: Signature, sighashType: UInt8 = 1) throws(ChainError) {
        guard signature.algorithm == .ecdsa, let r = signature.r, let s = signature.s,
              let parsedS = try? Secp256k1.Scalar(nonZeroBytes: [UInt8](s)),
              let parsed = try? Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: 0)
        else { throw .invalidSignature(reason: "not an ECDSA signature") }
        self.r = Data(r)
        self.s = parsed.isLowS ? Data(s) : Data((-parsedS).bytes)
        self.sighashType = sighashType
    }

    /// Parses `DER ‖ sighash byte` as BIP-66's `IsValidSignatureEncoding` defines it; r and s must be in
    /// [1, n) and S low (`invalidSignature` otherwise).
    public init(scriptEncoding: Data) throws(ChainError) {
        let sig = [UInt8](scriptEncoding)
        let n = sig.count
        guard n >= 9, n <= 73, sig[0] == 0x30, Int(sig[1]) == n - 3 else { throw .invalidSignature(reason: "not strict DER") }
        let lengthR = Int(sig[3])
        guard 5 + lengthR < n else { throw .invalidSignature(reason: "not strict DER") }
        let lengthS = Int(sig[5 + lengthR])
        guard lengthR + lengthS + 7 == n, sig[2] == 0x02, lengthR != 0, sig[4] & 0x80 == 0,
              !(lengthR > 1 && sig[4] == 0 && sig[5] & 0x80 == 0),
              sig[lengthR + 4] == 0x02, lengthS != 0, sig[lengthR + 6] & 0x80 == 0,
              !(lengthS > 1 && sig[lengthR + 6] == 0 && sig[lengthR + 7] & 0x80 == 0)
        else { throw .invalidSignature(reason: "not strict DER") }
        func word(_ bytes: ArraySlice<UInt8>) throws(ChainError) -> Data {
            let trimmed = bytes.drop { $0 == 0 }
            guard trimmed.count <= 32 else { throw .invalidSignature(reason: "r or s longer than 32 bytes") }
            return Data(repeating: 0, count: 32 - trimmed.count) + trimmed
        }
        let r = try word(sig[4..<(4 + lengthR)]), s = try word(sig[(lengthR + 6)..<(lengthR + 6 + lengthS)])
        guard let parsed = try? Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: 0), parsed.isLowS else {
            throw .invalidSignature(reason: "r or s out of range, or high S")
        }
        self.r = r
        self.s = s
        self.sighashType = sig[n - 1]
    }

    /// The strict DER encoding of (r, s), without the sighash byte.
    public var der: Data {
        guard let signature = try? Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: 0) else { return Data() }
        return Data(signature.der)
    }

    /// `DER ‖ sighash byte`, as pushed in a witness or scriptSig.
    public var scriptEncoding: Data { der + [sighashType] }

    /// Whether it verifies for `publicKey` (compressed or uncompressed) over the 32-byte `hash`.
    public func verifies(hash: Data, publicKey: Data) -> Bool {
        guard let point = try? Secp256k1.Point(bytes: [UInt8](publicKey)),
              let signature = try? Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: 0)
        else { return false }
        return Secp256k1.ECDSA.verify(signature, hash: [UInt8](hash), publicKey: point)
    }
}
