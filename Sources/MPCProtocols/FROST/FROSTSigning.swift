import MPCCrypto

extension FROST {
    /// One signer's signing state machine (RFC 9591 with SilentShard framing, docs/protocol/frost.md §9).
    ///
    /// 1. Round one ahead of time: a ``Presignature`` (BCAST tag 0x1101, `enc(D) ‖ enc(E)`).
    /// 2. `receiveRound1` for each co-signer's commitments.
    /// 3. `round2()` consumes the presignature and returns the BCAST share message (tag 0x1301):
    ///    `transcript[32] ‖ z_i[32]`, where transcript = H("sign/transcript"; key_id, gen, enc(PK′) ‖ H4(m) ‖
    ///    H5(commitment list)) lets receivers detect diverging views before blaming a share.
    /// 4. `receiveRound2` for each co-signer's share, then `signature()`.
    ///
    /// Soft derivation: with a non-empty path every signer uses s_i + δ and Y_k + δ·B under the
    /// group key A′ = A + δ·B; with Σ λ_i = 1 the shares add to a signature under A′.
    /// A rejected message never changes the state.
    public struct SigningSession: Sendable, CustomStringConvertible {
        public let keyshare: Keyshare
        /// The signers, ascending, unique, ≥ t, containing this party.
        public let signers: [PartyIndex]
        public let message: [UInt8]
        public let derivation: Derivation
        private let presignature: Presignature
        private var commitments: [PartyIndex: SigningCommitment]
        private var package: SigningPackage?
        private var shares: [PartyIndex: Scalar] = [:]

        /// Starts a session. Invalid signer sets, paths or a presignature of another keyshare are
        /// `invalidInput`; an already-used presignature is `invalidInput(.presignatureAlreadyUsed)`.
        public init(keyshare: Keyshare, signers: [PartyIndex], message: [UInt8], path: [UInt32] = [],
                    presignature: Presignature) throws(ProtocolError) {
            let sorted = signers.sorted()
            guard Set(sorted).count == sorted.count, sorted.count >= Int(keyshare.threshold),
                  sorted.allSatisfy({ $0 < keyshare.parties }), sorted.contains(keyshare.party) else {
                throw .invalidInput(.invalidParameters)
            }
            guard presignature.party == keyshare.party, presignature.keyId == keyshare.keyId,
                  presignature.generation == keyshare.generation else { throw .invalidInput(.presignatureMismatch) }
            guard !presignature.isConsumed else { throw .invalidInput(.presignatureAlreadyUsed) }
            self.keyshare = keyshare
            self.signers = sorted
            self.message = message
            self.derivation = try Derivation(publicKey: keyshare.publicKey, chainCode: keyshare.chainCode, path: path)
            self.presignature = presignature
            self.commitments = [keyshare.party: presignature.commitment]
        }

        /// This party's round-one message (from the presignature).
        public var round1Message: [UInt8] { presignature.round1Message }

        private func checkSender(_ sender: PartyIndex) throws(ProtocolError) {
            guard sender != keyshare.party, signers.contains(sender) else {
                throw .abort(party: sender, reason: .unexpectedSender)
            }
        }

        /// Accepts a co-signer's `enc(D) ‖ enc(E)` (64 bytes; valid, non-identity points).
        public mutating func receiveRound1(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            try checkSender(sender)
            guard package == nil else { throw .abort(party: sender, reason: .unexpectedRound) }
            guard commitments[sender] == nil else { throw .abort(party: sender, reason: .duplicateMessage) }
            guard bytes.count == 64 else { throw .abort(party: sender, reason: .malformedMessage) }
            var r = ByteReader(bytes, from: sender)
            let d = try r.readEd25519Point()
            let e = try r.readEd25519Point()
            try r.finish()
            commitments[sender] = SigningCommitment(identifier: Identifier(party: sender), hiding: d, binding: e)
        }

        /// Whether every co-signer's commitments are in.
        public var hasAllRound1: Bool { commitments.count == signers.count }

        /// The group key the signature verifies under (A′ for a derived path).
        public var signingKey: Point { derivation.publicKey }

        private func transcript(_ p: SigningPackage) -> [UInt8] {
            // key id and generation first: co-signers on different keyshare generations (one refreshed,
            // one not) then fail with a transcript mismatch instead of blaming an honest share.
            FROST.domain.hash("sign/transcript", keyshare.keyId, keyshare.generation, p.transcriptPrefix)
        }

        /// Computes this party's share; consumes the presignature (a second session with the same
        /// presignature fails here with `invalidInput(.presignatureAlreadyUsed)`).
        public mutating func round2() throws(ProtocolError) -> [UInt8] {
            guard hasAllRound1 else { throw .abort(party: nil, reason: .missingMessages) }
            guard package == nil else { throw .invalidInput(.stateAlreadyConsumed) }
            let nonces = try presignature.take()
            let p = try SigningPackage(groupKey: derivation.publicKey, commitments: Array(commitments.values), message: message,
                                       ownNonces: (keyshare.identifier, nonces))
            let z = try p.signatureShare(identifier: keyshare.identifier,
                                         secretShare: keyshare.secretShare + derivation.tweak, nonces: nonces)
            package = p
            shares[keyshare.party] = z
            return transcript(p) + z.bytes
        }

        /// Accepts a co-signer's `transcript ‖ z` (64 bytes). A transcript that differs from ours is
        /// `abort(…, .transcriptMismatch)` (sender blamed only with two signers). The share itself
        /// is checked only if the aggregate fails.
        public mutating func receiveRound2(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            try checkSender(sender)
            guard let p = package else { throw .abort(party: sender, reason: .unexpectedRound) }
            guard shares[sender] == nil else { throw .abort(party: sender, reason: .duplicateMessage) }
            guard bytes.count == 64 else { throw .abort(party: sender, reason: .malformedMessage) }
            var r = ByteReader(bytes, from: sender)
            let theirs = try r.read(32)
            let z = try r.readEd25519Scalar()
            try r.finish()
            guard theirs == transcript(p) else {
                throw .abort(party: signers.count == 2 ? sender : nil, reason: .transcriptMismatch)
            }
            shares[sender] = z
        }

        /// The 64-byte Ed25519 signature under `signingKey`, checked with libsodium. If it does not
        /// verify, every share is checked and the first bad one is
        /// `signingFailed(party:, .invalidSignatureShare)`.
        public func signature() throws(ProtocolError) -> [UInt8] {
            guard let p = package, shares.count == signers.count else { throw .abort(party: nil, reason: .missingMessages) }
            var ordered: [Scalar] = []
            for k in signers {
                guard let z = shares[k] else { throw .abort(party: nil, reason: .missingMessages) }
                ordered.append(z)
            }
            let signature = p.aggregate(ordered)
            if let key = try? Ed25519.VerifyingKey(bytes: p.groupKey.bytes), key.isValidSignature(signature, for: message) {
                return signature
            }
            let tweakPoint = Point(base: derivation.tweak)
            for (k, z) in zip(signers, ordered) {
                let y = keyshare.verifyingShares[Int(k)] + tweakPoint
                guard try p.verifySignatureShare(z, identifier: Identifier(party: k), verifyingShare: y) else {
                    throw .signingFailed(party: k, reason: .invalidSignatureShare)
                }
            }
            throw .signingFailed(party: nil, reason: .invalidSignature)
        }

        public var description: String {
            "FROST.SigningSession(party: \(keyshare.party), signers: \(signers), secrets redacted)"
        }
    }
}
