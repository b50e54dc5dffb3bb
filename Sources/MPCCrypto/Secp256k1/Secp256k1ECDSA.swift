internal import CSecp256k1

extension Secp256k1 {
    /// An ECDSA signature over secp256k1 with its recovery id.
    public struct ECDSASignature: Sendable, Equatable {
        /// r, 32 bytes big-endian.
        public let r: [UInt8]
        /// s, 32 bytes big-endian (low-S when produced here).
        public let s: [UInt8]
        /// The recovery id (0–3): bit 0 is the parity of R.y, bit 1 says R.x ≥ n.
        public let recoveryId: UInt8

        /// Builds a signature from its parts; r and s must be in [1, n).
        public init(r: [UInt8], s: [UInt8], recoveryId: UInt8) throws(CryptoError) {
            guard recoveryId < 4 else { throw .invalidSignatureEncoding }
            _ = try Scalar(nonZeroBytes: r)
            _ = try Scalar(nonZeroBytes: s)
            self.r = r; self.s = s; self.recoveryId = recoveryId
        }

        /// r ‖ s (64 bytes).
        public var compact: [UInt8] { r + s }

        /// Whether s ≤ n/2.
        public var isLowS: Bool {
            var signature = secp256k1_ecdsa_signature()
            let compact = self.compact
            guard secp256k1_ecdsa_signature_parse_compact(Secp256k1Context.shared.pointer, &signature, compact) == 1 else {
                return false
            }
            var normalized = secp256k1_ecdsa_signature()
            return secp256k1_ecdsa_signature_normalize(Secp256k1Context.shared.pointer, &normalized, &signature) == 0
        }

        /// The strict DER encoding.
        public var der: [UInt8] {
            var signature = secp256k1_ecdsa_signature()
            _ = secp256k1_ecdsa_signature_parse_compact(Secp256k1Context.shared.pointer, &signature, compact)
            var out = [UInt8](repeating: 0, count: 72)
            var length = out.count
            _ = secp256k1_ecdsa_signature_serialize_der(Secp256k1Context.shared.pointer, &out, &length, &signature)
            return Array(out.prefix(length))
        }
    }

    /// ECDSA operations from libsecp256k1.
    public enum ECDSA {
        /// Verifies a signature on a 32-byte hash. High-S signatures are rejected (as libsecp256k1
        /// and Bitcoin do).
        public static func verify(_ signature: ECDSASignature, hash: [UInt8], publicKey: Point) -> Bool {
            guard hash.count == 32, var key = publicKey.key else { return false }
            var parsed = secp256k1_ecdsa_signature()
            guard secp256k1_ecdsa_signature_parse_compact(Secp256k1Context.shared.pointer, &parsed, signature.compact) == 1
            else { return false }
            return secp256k1_ecdsa_verify(Secp256k1Context.shared.pointer, &parsed, hash, &key) == 1
        }

        /// Recovers the public key from a signature, its recovery id and the 32-byte hash.
        public static func recoverPublicKey(_ signature: ECDSASignature, hash: [UInt8]) throws(CryptoError) -> Point {
            guard hash.count == 32 else { throw .invalidLength(expected: 32, actual: hash.count) }
            var recoverable = secp256k1_ecdsa_recoverable_signature()
            guard secp256k1_ecdsa_recoverable_signature_parse_compact(
                Secp256k1Context.shared.pointer, &recoverable, signature.compact, Int32(signature.recoveryId)) == 1
            else { throw .invalidSignatureEncoding }
            var key = secp256k1_pubkey()
            guard secp256k1_ecdsa_recover(Secp256k1Context.shared.pointer, &key, &recoverable, hash) == 1 else {
                throw .invalidSignatureEncoding
            }
            return Point(key: key)
        }

        /// Single-party signing with a whole private key (RFC 6979 nonces, low-S). The SDK never holds
        /// a whole key; this exists for tests and as the benchmarks' baseline.
        public static func sign(hash: [UInt8], privateKey: Scalar) throws(CryptoError) -> ECDSASignature {
            guard hash.count == 32 else { throw .invalidLength(expected: 32, actual: hash.count) }
            guard !privateKey.isZero else { throw .zeroScalar }
            var recoverable = secp256k1_ecdsa_recoverable_signature()
            let secret = privateKey.bytes
            guard secp256k1_ecdsa_sign_recoverable(Secp256k1Context.shared.pointer, &recoverable, hash, secret, nil, nil) == 1
            else { throw .libraryFailure("secp256k1_ecdsa_sign_recoverable") }
            var compact = [UInt8](repeating: 0, count: 64)
            var recoveryId: Int32 = 0
            _ = secp256k1_ecdsa_recoverable_signature_serialize_compact(
                Secp256k1Context.shared.pointer, &compact, &recoveryId, &recoverable)
            return try ECDSASignature(r: Array(compact[0..<32]), s: Array(compact[32..<64]), recoveryId: UInt8(recoveryId))
        }
    }
}
