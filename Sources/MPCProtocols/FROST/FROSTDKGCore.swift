import MPCCrypto

// Pedersen DKG with proofs of knowledge (Komlo–Goldberg Figure 1; the flow of the ZcashFoundation
// `vectors_dkg.json`) as pure functions over identifiers. FROSTKeyGeneration.swift wraps them.

extension FROST {
    /// Pure DKG building blocks.
    public enum DKG {
        /// Feldman commitments φ_k = a_k·B.
        public static func commitments(_ coefficients: [Scalar]) -> [Point] {
            coefficients.map { Point(base: $0) }
        }

        /// The proof-of-knowledge challenge HDKG(enc(id) ‖ enc(φ_0) ‖ enc(R) ‖ context). With an
        /// empty context this is the ZcashFoundation challenge; SilentShard passes the 32-byte
        /// keygen context (the paper's Φ), which binds the proof to the session.
        public static func challenge(identifier: Identifier, commitment: Point, nonceCommitment: Point, context: [UInt8]) -> Scalar {
            FROST.hdkg(identifier.scalar.bytes + commitment.bytes + nonceCommitment.bytes + context)
        }

        /// σ = (R, μ) with R = k·B, μ = k + a_0·c.
        public static func proofOfKnowledge(identifier: Identifier, secret: Scalar, nonce: Scalar, context: [UInt8]) -> (r: Point, mu: Scalar) {
            let r = Point(base: nonce)
            let c = challenge(identifier: identifier, commitment: Point(base: secret), nonceCommitment: r, context: context)
            return (r, nonce + secret * c)
        }

        /// μ·B = R + c·φ_0.
        public static func verifyProofOfKnowledge(r: Point, mu: Scalar, identifier: Identifier, commitment: Point, context: [UInt8]) -> Bool {
            let c = challenge(identifier: identifier, commitment: commitment, nonceCommitment: r, context: context)
            return Point(base: mu) == r + c * commitment
        }

        /// The share for `identifier`: f(x).
        public static func share(_ coefficients: [Scalar], for identifier: Identifier) -> Scalar {
            FROST.evaluate(coefficients, at: identifier.scalar)
        }

        /// Feldman check: share·B = Σ φ_k x^k.
        public static func verifyShare(_ share: Scalar, for identifier: Identifier, commitments: [Point]) -> Bool {
            Point(base: share) == FROST.evaluate(commitments: commitments, at: identifier.scalar)
        }
    }
}
