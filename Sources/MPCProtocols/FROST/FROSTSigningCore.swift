import MPCCrypto

// RFC 9591 §4–§5 as pure functions over identifiers (no parties, no I/O). The state machine in
// FROSTSigning.swift wraps them; the test vectors drive them directly.

extension FROST {
    /// A signer's secret nonce pair (hiding d, binding e). Never printed.
    public struct SigningNonces: Sendable, CustomStringConvertible, SecretReflecting {
        public let hiding: Scalar
        public let binding: Scalar

        /// Restored nonces (a stored presignature).
        init(hiding: Scalar, binding: Scalar) {
            self.hiding = hiding
            self.binding = binding
        }

        /// RFC 9591 `nonce_generate` for both nonces, from explicit 32-byte randomness (test vectors).
        init(hidingRandomness: [UInt8], bindingRandomness: [UInt8], secret: Scalar) {
            hiding = FROST.h3(hidingRandomness + secret.bytes)
            binding = FROST.h3(bindingRandomness + secret.bytes)
        }

        /// RFC 9591 round one `commit`: fresh randomness mixed with the secret share (§4.1).
        init(secret: Scalar, using rng: inout some RandomNumberGenerator) {
            self.init(hidingRandomness: FROST.randomBytes(32, using: &rng),
                      bindingRandomness: FROST.randomBytes(32, using: &rng), secret: secret)
        }

        /// The public commitments (D, E) = (d·B, e·B).
        public func commitment(for identifier: Identifier) -> SigningCommitment {
            SigningCommitment(identifier: identifier, hiding: Point(base: hiding), binding: Point(base: binding))
        }

        public var description: String { "FROST.SigningNonces(redacted)" }
    }

    /// A participant's round-one output (identifier, D, E); public.
    public struct SigningCommitment: Sendable, Equatable {
        public let identifier: Identifier
        public let hiding: Point
        public let binding: Point

        public init(identifier: Identifier, hiding: Point, binding: Point) {
            self.identifier = identifier
            self.hiding = hiding
            self.binding = binding
        }
    }

    /// Everything signers and the aggregator derive from (group key, commitment list, message):
    /// binding factors ρ_i, the group commitment R and the challenge c (RFC 9591 §4.4–§4.6).
    public struct SigningPackage: Sendable {
        public let groupKey: Point
        public let message: [UInt8]
        /// Sorted by identifier, no duplicates.
        public let commitments: [SigningCommitment]
        public let bindingFactors: [Scalar]
        public let groupCommitment: Point
        public let challenge: Scalar
        /// `enc(PK) ‖ H4(msg) ‖ H5(commitment list)`: the binding-factor input prefix (binds everything).
        public let transcriptPrefix: [UInt8]

        /// Sorts the commitments; duplicates are `invalidInput(.collidingEvaluationPoints)`.
        ///
        /// `ownNonces` (a signer's own identifier and nonces) only speeds up R: that signer's term
        /// D_i + ρ_i·E_i is computed as the constant-time base multiplication (d_i + ρ_i·e_i)·B.
        public init(groupKey: Point, commitments: [SigningCommitment], message: [UInt8],
                    ownNonces: (identifier: Identifier, nonces: SigningNonces)? = nil) throws(ProtocolError) {
            let sorted = commitments.sorted { $0.identifier < $1.identifier }
            guard Set(sorted.map(\.identifier)).count == sorted.count, !sorted.isEmpty else {
                throw .invalidInput(.collidingEvaluationPoints)
            }
            var encoded: [UInt8] = []
            encoded.reserveCapacity(96 * sorted.count)
            for c in sorted {
                encoded += c.identifier.scalar.bytes
                encoded += c.hiding.bytes
                encoded += c.binding.bytes
            }
            let prefix = groupKey.bytes + FROST.h4(message) + FROST.h5(encoded)
            let factors = sorted.map { FROST.h1(prefix + $0.identifier.scalar.bytes) }
            var r = Point.identity
            for (c, rho) in zip(sorted, factors) {
                if let own = ownNonces, own.identifier == c.identifier {
                    r += Point(base: own.nonces.hiding + rho * own.nonces.binding)
                } else {
                    r += c.hiding + rho * c.binding
                }
            }
            self.groupKey = groupKey
            self.message = message
            self.commitments = sorted
            self.bindingFactors = factors
            self.groupCommitment = r
            self.challenge = FROST.h2(r.bytes + groupKey.bytes + message)
            self.transcriptPrefix = prefix
        }

        /// The signer identifiers, ascending.
        public var identifiers: [Identifier] { commitments.map(\.identifier) }

        func position(of identifier: Identifier) throws(ProtocolError) -> Int {
            guard let index = commitments.firstIndex(where: { $0.identifier == identifier }) else {
                throw .invalidInput(.invalidParameters)
            }
            return index
        }

        /// RFC 9591 §5.2 `sign`: z_i = d_i + e_i·ρ_i + λ_i·s_i·c.
        /// Internal: only a `Presignature` (single use) may supply nonces outside tests.
        func signatureShare(identifier: Identifier, secretShare: Scalar, nonces: SigningNonces) throws(ProtocolError) -> Scalar {
            let index = try position(of: identifier)
            let lambda = try FROST.lagrange(identifier, over: identifiers)
            return nonces.hiding + nonces.binding * bindingFactors[index] + lambda * secretShare * challenge
        }

        /// RFC 9591 §5.4 `verify_signature_share`: z_i·B = D_i + ρ_i·E_i + (c·λ_i)·Y_i.
        public func verifySignatureShare(_ share: Scalar, identifier: Identifier, verifyingShare: Point) throws(ProtocolError) -> Bool {
            let index = try position(of: identifier)
            let lambda = try FROST.lagrange(identifier, over: identifiers)
            let c = commitments[index]
            let expected = c.hiding + bindingFactors[index] * c.binding + (challenge * lambda) * verifyingShare
            return Point(base: share) == expected
        }

        /// RFC 9591 §5.3 `aggregate`: enc(R) ‖ enc(Σ z_i) (64 bytes).
        public func aggregate(_ shares: [Scalar]) -> [UInt8] {
            var z = Scalar.zero
            for share in shares { z += share }
            return groupCommitment.bytes + z.bytes
        }
    }
}
