import MPCCrypto

extension FROST {
    /// BIP32-Ed25519 (Khovratovich–Law) *public* child derivation from the group key and root
    /// chain code, as bip-utils' `Bip32KholawEd25519` derives public children (docs/protocol/frost.md §10):
    ///
    /// for each index i < 2^31:  Z = HMAC-SHA512(cc, 0x02 ‖ enc(A) ‖ le32(i)),
    /// δ_i = 8·int_LE(Z[0..<28]), A ← A + δ_i·B, cc ← HMAC-SHA512(cc, 0x03 ‖ enc(A_parent) ‖ le32(i))[32..<64].
    ///
    /// The result (A′, cc′, δ) has A′ = A + δ·B with δ = Σ δ_i mod ℓ, so a signature by the tweaked
    /// shares verifies under A′ with plain RFC 8032.
    public struct Derivation: Sendable, Equatable {
        public let publicKey: Point
        public let chainCode: [UInt8]
        /// The additive tweak δ (public: anyone with the chain code can compute it).
        public let tweak: Scalar

        /// Derives along `path`. A hardened index (≥ 2^31), a chain code of the wrong length or an
        /// identity child is `invalidInput(.invalidDerivationPath)`.
        public init(publicKey: Point, chainCode: [UInt8], path: [UInt32]) throws(ProtocolError) {
            guard chainCode.count == 32, path.count <= 255 else { throw .invalidInput(.invalidDerivationPath) }
            var a = publicKey
            var cc = chainCode
            var delta = Scalar.zero
            for index in path {
                guard index < 0x8000_0000 else { throw .invalidInput(.invalidDerivationPath) }
                let le: [UInt8] = [UInt8(truncatingIfNeeded: index), UInt8(truncatingIfNeeded: index >> 8),
                                   UInt8(truncatingIfNeeded: index >> 16), UInt8(truncatingIfNeeded: index >> 24)]
                let z = SHA512.hmac(key: cc, data: [0x02] + a.bytes + le)
                let step = Self.timesEight(Array(z[0..<28]))
                let nextChainCode = Array(SHA512.hmac(key: cc, data: [0x03] + a.bytes + le)[32..<64])
                a = a + Point(base: step)
                guard !a.isIdentity else { throw .invalidInput(.invalidDerivationPath) }
                delta += step
                cc = nextChainCode
            }
            self.publicKey = a
            self.chainCode = cc
            self.tweak = delta
        }

        /// 8·n for a 28-byte little-endian n, as a canonical scalar (< 2^227 < ℓ).
        static func timesEight(_ zl: [UInt8]) -> Scalar {
            var out = [UInt8](repeating: 0, count: 32)
            var carry: UInt16 = 0
            for k in 0..<28 {
                let v = UInt16(zl[k]) << 3 | carry
                out[k] = UInt8(truncatingIfNeeded: v)
                carry = v >> 8
            }
            out[28] = UInt8(truncatingIfNeeded: carry)
            return (try? Scalar(bytes: out)) ?? .zero
        }

        /// Parses "m" or "m/i/…" (decimal, no leading zeros, < 2^31); a hardened marker or
        /// anything else is `invalidInput(.invalidDerivationPath)`.
        public static func parse(_ text: String) throws(ProtocolError) -> [UInt32] {
            var parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.first == "m" else { throw .invalidInput(.invalidDerivationPath) }
            parts.removeFirst()
            var out: [UInt32] = []
            for part in parts {
                guard !part.isEmpty, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                      part == "0" || part.first != "0",
                      let value = UInt32(part), value < 0x8000_0000 else { throw .invalidInput(.invalidDerivationPath) }
                out.append(value)
            }
            return out
        }
    }

    /// The public key derived from a keyshare along a non-hardened path.
    public static func derivePublicKey(_ keyshare: Keyshare, path: [UInt32]) throws(ProtocolError) -> Derivation {
        try Derivation(publicKey: keyshare.publicKey, chainCode: keyshare.chainCode, path: path)
    }
}
