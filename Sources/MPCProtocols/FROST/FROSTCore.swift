import MPCCrypto

/// RFC 9591 §4–§5 as pure functions over identifiers (no parties, no I/O), written once for every
/// ciphersuite. `FROST.SigningNonces`, `FROST.SigningCommitment` and `FROST.SigningPackage` are this
/// core's FROST(Ed25519, SHA-512) instance; `FROSTSecp256k1` and `FROSTSecp256k1BIP340` are two more
/// (docs/protocol/frost.md §18).
public enum FROSTCore<Suite: FROSTCiphersuite> {
    public typealias Scalar = Suite.Scalar
    public typealias Element = Suite.Element

    /// The identifier as a scalar of this group.
    public static func scalar(_ identifier: FROST.Identifier) -> Scalar { Scalar(UInt64(identifier.value)) }

    /// f(x) = Σ a_k x^k (Horner; constant time in the coefficients).
    public static func evaluate(_ coefficients: [Scalar], at x: Scalar) -> Scalar {
        var acc = Scalar.zero
        for coefficient in coefficients.reversed() { acc = acc * x + coefficient }
        return acc
    }

    /// A signer's secret nonce pair (hiding d, binding e). Never printed.
    public struct SigningNonces: Sendable, CustomStringConvertible, SecretReflecting {
        public let hiding: Scalar
        public let binding: Scalar

        /// Restored nonces (a stored presignature).
        init(hiding: Scalar, binding: Scalar) {
            self.hiding = hiding
            self.binding = binding
        }

        /// RFC 9591 `nonce_generate` for both nonces, from explicit 32-byte randomness (test vectors):
        /// H3(random ‖ SerializeScalar(secret)).
        init(hidingRandomness: [UInt8], bindingRandomness: [UInt8], secret: Scalar) {
            let encoded = Suite.serialize(secret)
            hiding = Suite.h3(hidingRandomness + encoded)
            binding = Suite.h3(bindingRandomness + encoded)
        }

        /// RFC 9591 round one `commit`: fresh randomness mixed with the secret share (§4.1).
        init(secret: Scalar, using rng: inout some RandomNumberGenerator) {
            self.init(hidingRandomness: FROST.randomBytes(32, using: &rng),
                      bindingRandomness: FROST.randomBytes(32, using: &rng), secret: secret)
        }

        /// The public commitments (D, E) = (d·G, e·G).
        public func commitment(for identifier: FROST.Identifier) -> SigningCommitment {
            SigningCommitment(identifier: identifier, hiding: Element(base: hiding), binding: Element(base: binding))
        }

        public var description: String { "FROST.SigningNonces(redacted)" }
    }

    /// A participant's round-one output (identifier, D, E); public.
    public struct SigningCommitment: Sendable, Equatable {
        public let identifier: FROST.Identifier
        public let hiding: Element
        public let binding: Element

        public init(identifier: FROST.Identifier, hiding: Element, binding: Element) {
            self.identifier = identifier
            self.hiding = hiding
            self.binding = binding
        }

        /// Decodes `enc(D) ‖ enc(E)` from outside (every check of `Suite.deserializeElement`, so no
        /// identity); a bad encoding is `abort(party, .malformedMessage)` with `party` the sender.
        public init(identifier: FROST.Identifier, bytes: [UInt8], from party: PartyIndex?) throws(ProtocolError) {
            let ne = Suite.elementByteCount
            guard bytes.count == 2 * ne else { throw .abort(party: party, reason: .malformedMessage) }
            do {
                hiding = try Suite.deserializeElement(Array(bytes.prefix(ne)))
                binding = try Suite.deserializeElement(Array(bytes.suffix(ne)))
            } catch { throw .abort(party: party, reason: .malformedMessage) }
            self.identifier = identifier
        }
    }

    /// Everything signers and the aggregator derive from (group key, commitment list, message):
    /// binding factors ρ_i, the group commitment R and the challenge c (RFC 9591 §4.4–§4.6).
    public struct SigningPackage: Sendable {
        public let groupKey: Element
        public let message: [UInt8]
        /// Sorted by identifier, no duplicates.
        public let commitments: [SigningCommitment]
        public let bindingFactors: [Scalar]
        /// R = Σ D_i + ρ_i·E_i as computed (before any parity rule of the suite).
        public let groupCommitment: Element
        public let challenge: Scalar
        /// `enc(PK) ‖ H4(msg) ‖ H5(commitment list)`: the binding-factor input prefix (binds everything).
        public let transcriptPrefix: [UInt8]
        /// Whether the suite's parity rule negates the nonces for this R (BIP340: odd y).
        public let negatesNonces: Bool
        private let signaturePrefix: [UInt8]

        /// Sorts the commitments; duplicates are `invalidInput(.collidingEvaluationPoints)`, a group
        /// key without encoding `invalidInput(.invalidParameters)`, R = identity (negligible for
        /// honest signers) `abort(nil, .identityPoint)` where the group cannot encode it.
        ///
        /// `ownNonces` (a signer's own identifier and nonces) only speeds up R: that signer's term
        /// D_i + ρ_i·E_i is computed as the constant-time base multiplication (d_i + ρ_i·e_i)·G.
        public init(groupKey: Element, commitments: [SigningCommitment], message: [UInt8],
                    ownNonces: (identifier: FROST.Identifier, nonces: SigningNonces)? = nil) throws(ProtocolError) {
            let sorted = commitments.sorted { $0.identifier < $1.identifier }
            guard Set(sorted.map(\.identifier)).count == sorted.count, !sorted.isEmpty else {
                throw .invalidInput(.collidingEvaluationPoints)
            }
            var encoded: [UInt8] = []
            let keyBytes: [UInt8]
            do {
                encoded.reserveCapacity((Suite.scalarByteCount + 2 * Suite.elementByteCount) * sorted.count)
                for c in sorted {
                    encoded += Suite.serialize(FROSTCore.scalar(c.identifier))
                    encoded += try Suite.serialize(c.hiding)
                    encoded += try Suite.serialize(c.binding)
                }
                keyBytes = try Suite.serialize(groupKey)
            } catch { throw .invalidInput(.invalidParameters) }
            let prefix = keyBytes + Suite.h4(message) + Suite.h5(encoded)
            let factors = sorted.map { Suite.h1(prefix + Suite.serialize(FROSTCore.scalar($0.identifier))) }
            var r = Element.identity
            for (c, rho) in zip(sorted, factors) {
                if let own = ownNonces, own.identifier == c.identifier {
                    r = r + Element(base: own.nonces.hiding + rho * own.nonces.binding)
                } else {
                    r = r + (c.hiding + rho * c.binding)
                }
            }
            do {
                self.challenge = try Suite.challenge(groupCommitment: r, groupKey: groupKey, message: message)
                self.signaturePrefix = try Suite.signatureCommitment(r)
            } catch { throw .abort(party: nil, reason: .identityPoint) }
            self.groupKey = groupKey
            self.message = message
            self.commitments = sorted
            self.bindingFactors = factors
            self.groupCommitment = r
            self.negatesNonces = Suite.negatesNonces(groupCommitment: r)
            self.transcriptPrefix = prefix
        }

        /// The signer identifiers, ascending.
        public var identifiers: [FROST.Identifier] { commitments.map(\.identifier) }

        func position(of identifier: FROST.Identifier) throws(ProtocolError) -> Int {
            guard let index = commitments.firstIndex(where: { $0.identifier == identifier }) else {
                throw .invalidInput(.invalidParameters)
            }
            return index
        }

        /// RFC 9591 §5.2 `sign`: z_i = d_i + e_i·ρ_i + λ_i·s_i·c (with −(d_i + e_i·ρ_i) when the
        /// suite's parity rule says so; the condition depends on R only, which is public).
        /// Internal: only a single-use presignature may supply nonces outside tests.
        func signatureShare(identifier: FROST.Identifier, secretShare: Scalar, nonces: SigningNonces) throws(ProtocolError) -> Scalar {
            let index = try position(of: identifier)
            let lambda = try Suite.lagrange(identifier, over: identifiers, at: .zero)
            let nonce = nonces.hiding + nonces.binding * bindingFactors[index]
            return (negatesNonces ? -nonce : nonce) + lambda * secretShare * challenge
        }

        /// RFC 9591 §5.4 `verify_signature_share`: z_i·G = D_i + ρ_i·E_i + (c·λ_i)·Y_i (±(D_i + ρ_i·E_i)
        /// by the suite's parity rule).
        public func verifySignatureShare(_ share: Scalar, identifier: FROST.Identifier, verifyingShare: Element) throws(ProtocolError) -> Bool {
            let index = try position(of: identifier)
            let lambda = try Suite.lagrange(identifier, over: identifiers, at: .zero)
            let c = commitments[index]
            let commitmentShare = c.hiding + bindingFactors[index] * c.binding
            let expected = (negatesNonces ? -commitmentShare : commitmentShare) + (challenge * lambda) * verifyingShare
            return Element(base: share) == expected
        }

        /// RFC 9591 §5.3 `aggregate`: the suite's R encoding ‖ enc(Σ z_i).
        public func aggregate(_ shares: [Scalar]) -> [UInt8] {
            var z = Scalar.zero
            for share in shares { z = z + share }
            return signaturePrefix + Suite.serialize(z)
        }

        /// Aggregates and verifies (RFC 9591 §5.3 with the §5.4 fallback): the signature when it
        /// verifies under `groupKey`; otherwise the first share failing `verify_signature_share` is
        /// `signingFailed(party:, .invalidSignatureShare)` (party = identifier − 1), and if every
        /// share passes, `signingFailed(nil, .invalidSignature)`. Missing shares or verifying shares
        /// are `abort(nil, .missingMessages)`.
        public func aggregate(shares: [FROST.Identifier: Scalar],
                              verifyingShares: [FROST.Identifier: Element]) throws(ProtocolError) -> [UInt8] {
            var ordered: [Scalar] = []
            for id in identifiers {
                guard let z = shares[id] else { throw .abort(party: nil, reason: .missingMessages) }
                ordered.append(z)
            }
            let signature = aggregate(ordered)
            if Suite.verify(signature: signature, message: message, groupKey: groupKey) { return signature }
            for (id, z) in zip(identifiers, ordered) {
                guard let y = verifyingShares[id] else { throw .abort(party: nil, reason: .missingMessages) }
                guard try verifySignatureShare(z, identifier: id, verifyingShare: y) else {
                    throw .signingFailed(party: id.party, reason: .invalidSignatureShare)
                }
            }
            throw .signingFailed(party: nil, reason: .invalidSignature)
        }
    }
}
