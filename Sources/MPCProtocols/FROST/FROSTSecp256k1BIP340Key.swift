import MPCCrypto

extension FROSTSecp256k1BIP340 {
    /// The BIP341 key-path tweak to apply, if any.
    public enum Tweak: Sendable, Equatable {
        /// Plain BIP340 under the even-y lift of the group key (no Taproot tweak).
        case none
        /// BIP341 key path: t = tagged_hash("TapTweak", bytes(P) [‖ merkleRoot]); nil = no script
        /// tree (BIP86), otherwise the 32-byte Merkle root of the script tree.
        case taproot(merkleRoot: [UInt8]?)
    }

    /// The x-only key a BIP340 FROST signature verifies under, and how each share maps to it.
    ///
    /// With P the DKG group key (secret x = Σ λ_i s_i), g₁ = ±1 making g₁·P even (BIP340 `lift_x`):
    /// * no tweak: key K = g₁·P, s_i′ = g₁·s_i, Y_i′ = g₁·Y_i;
    /// * Taproot: t as in BIP341, Q = g₁·P + t·G, g₂ = ±1 making g₂·Q even; K = g₂·Q,
    ///   s_i′ = g₂·(g₁·s_i + t), Y_i′ = g₂·(g₁·Y_i + t·G).
    /// Because Σ_{i∈S} λ_i = 1, Σ λ_i·s_i′ is K's discrete logarithm: every signer carries λ_i of
    /// the tweak (as for the Ed25519 derivation, docs/protocol/frost.md §10.3), no designated party.
    /// g₁, g₂ and t are public; the share is mapped with constant-time scalar arithmetic.
    public struct SigningKey: Sendable, Equatable {
        /// The internal key lift_x(bytes(P)) = g₁·P (even y).
        public let internalKey: Secp256k1.Point
        /// The key the signature verifies under (even y): the internal key, or the Taproot output key.
        public let key: Secp256k1.Point
        /// The BIP341 tweak t (zero without one).
        public let tweak: Secp256k1.Scalar
        let negateShare: Bool   // g₂·g₁ = −1
        let negateTweak: Bool   // g₂ = −1

        /// From the group key (the identity is `invalidInput(.invalidParameters)`), with `tweak`.
        /// A Merkle root of other than 32 bytes, t ≥ n or Q = identity (BIP341 failures) are
        /// `invalidInput(.invalidParameters)`.
        public init(groupKey: Secp256k1.Point, tweak: Tweak = .none) throws(ProtocolError) {
            guard !groupKey.isIdentity else { throw .invalidInput(.invalidParameters) }
            let g1Negative = !groupKey.hasEvenY
            let internalKey = g1Negative ? -groupKey : groupKey
            self.internalKey = internalKey
            switch tweak {
            case .none:
                self.key = internalKey
                self.tweak = .zero
                self.negateShare = g1Negative
                self.negateTweak = false
            case .taproot(let merkleRoot):
                if let merkleRoot, merkleRoot.count != 32 { throw .invalidInput(.invalidParameters) }
                guard let px = try? internalKey.xOnly(),
                      let t = try? Secp256k1.Scalar(bytes: Secp256k1.taggedHash("TapTweak", px + (merkleRoot ?? [])))
                else { throw .invalidInput(.invalidParameters) }
                let q = internalKey + Secp256k1.Point(base: t)
                guard !q.isIdentity else { throw .invalidInput(.invalidParameters) }
                let g2Negative = !q.hasEvenY
                self.key = g2Negative ? -q : q
                self.tweak = t
                self.negateShare = g1Negative != g2Negative
                self.negateTweak = g2Negative
            }
        }

        /// bytes(K): the 32-byte x-only key (BIP86's output key in the Taproot case).
        public var xOnlyKey: [UInt8] { (try? key.xOnly()) ?? [] }

        /// s_i′ for a secret share s_i (constant-time arithmetic; the signs are public).
        public func signingShare(_ share: Secp256k1.Scalar) -> Secp256k1.Scalar {
            (negateShare ? -share : share) + (negateTweak ? -tweak : tweak)
        }

        /// Y_i′ for a verifying share Y_i (public).
        public func verifyingShare(_ share: Secp256k1.Point) -> Secp256k1.Point {
            let tweakPoint = Secp256k1.Point(base: negateTweak ? -tweak : tweak)
            return (negateShare ? -share : share) + tweakPoint
        }
    }
}
