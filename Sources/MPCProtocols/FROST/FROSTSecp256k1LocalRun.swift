import MPCCrypto

extension FROSTCore {
    /// A trusted-dealer split of a random secret into `parties` Shamir shares of threshold `threshold`
    /// (identifiers 1…n) and the group key. In-process only (tests, the interop oracle): the product's
    /// keys come from the DKG.
    @_spi(InProcess)
    public static func dealerSplit(threshold: Int, parties: Int,
                                   using rng: inout some RandomNumberGenerator) -> (groupKey: Element, shares: [FROST.Identifier: Scalar]) {
        let coefficients = (0..<max(threshold, 1)).map { _ in Scalar.random(using: &rng) }
        var shares: [FROST.Identifier: Scalar] = [:]
        for party in 0..<parties {
            let id = FROST.Identifier(party: PartyIndex(truncatingIfNeeded: party))
            shares[id] = evaluate(coefficients, at: scalar(id))
        }
        return (Element(base: coefficients[0]), shares)
    }

    /// Every signer's two rounds in one process: nonces, commitments (through their wire encoding),
    /// shares of `effectiveShare(s_i)` (the suite's key mapping, e.g. BIP340's parity and TapTweak),
    /// then aggregation with verification under `groupKey` (share checks on failure).
    @_spi(InProcess)
    public static func localSign(message: [UInt8], signers: [FROST.Identifier], shares: [FROST.Identifier: Scalar],
                                 groupKey: Element, effectiveShare: (Scalar) -> Scalar,
                                 effectiveVerifyingShare: (Element) -> Element,
                                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [UInt8] {
        var nonces: [FROST.Identifier: SigningNonces] = [:]
        var commitments: [SigningCommitment] = []
        for id in signers {
            guard let share = shares[id] else { throw .invalidInput(.invalidParameters) }
            let n = SigningNonces(secret: share, using: &rng)
            let c = n.commitment(for: id)
            let wire: [UInt8]
            do { wire = try Suite.serialize(c.hiding) + (try Suite.serialize(c.binding)) } catch { throw .abort(party: nil, reason: .identityPoint) }
            commitments.append(try SigningCommitment(identifier: id, bytes: wire, from: id.party))
            nonces[id] = n
        }
        let package = try SigningPackage(groupKey: groupKey, commitments: commitments, message: message)
        var zs: [FROST.Identifier: Scalar] = [:]
        var verifying: [FROST.Identifier: Element] = [:]
        for id in signers {
            guard let share = shares[id], let n = nonces[id] else { throw .invalidInput(.invalidParameters) }
            zs[id] = try package.signatureShare(identifier: id, secretShare: effectiveShare(share), nonces: n)
            verifying[id] = effectiveVerifyingShare(Element(base: share))
        }
        return try package.aggregate(shares: zs, verifyingShares: verifying)
    }
}
