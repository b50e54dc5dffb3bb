import MPCCrypto

extension DKLsSign.Round2State {
    /// After all round-2 messages: open the co-signers' nonce commitments, complete the RVOLEs as Bob
    /// and run the Γ checks (AbortAndBan on failure), check Σ pk = P′, and keep only the presignature.
    public func presignature(_ messages: [ProtocolMessage]) throws(ProtocolError) -> DKLsPresignature {
        let parameters = round1.parameters, keyshare = parameters.keyshare, i = parameters.me
        let directs = try RoundInbox(tag: DKLsTag.signRound2Direct, broadcast: false, receiver: i,
                                     senders: Set(parameters.coSigners)).collect(messages)
        try once.consume()
        var bigR = round1.bigR, publicKeySum = pk
        var phiSum = round1.phi
        var uCross = Secp256k1.Scalar.zero, yCross = Secp256k1.Scalar.zero
        for j in parameters.coSigners {
            let payload = directs[j] ?? []
            guard payload.count == DKLsSign.round2DirectSize else { throw .abort(party: j, reason: .malformedMessage) }
            var reader = ByteReader(payload, from: j)
            guard Bits.equal(try reader.read(32), fsid) else { throw .abort(party: j, reason: .transcriptMismatch) }
            let rj = try reader.readSecp256k1Point()
            let salt = try reader.read(32)
            let pkj = try reader.readSecp256k1Point()
            let gammaU = try reader.readSecp256k1Point()
            let gammaV = try reader.readSecp256k1Point()
            let psi = try reader.readSecp256k1Scalar()
            let rvoleMessage = try reader.read(RVOLE.messageSize)
            try reader.finish()
            guard let nonce = nonces[j], let commitment = commitments[j],
                  Bits.equal(DKLsHash.h("sign/commit", round1.context, [j], nonce, try DKLsHash.enc(rj), salt), commitment)
            else { throw .abort(party: j, reason: .commitmentMismatch) }
            guard let bob = round1.bobs[j], let c = products[j] else { throw .abort(party: j, reason: .missingMessages) }
            let d = try RVOLE.complete(state: bob, outId: DKLsHash.h("ote/out-id", fsid, [i], [j]),
                                       vsid: DKLsHash.h("rvole/sid", fsid, [i], [j]), message: rvoleMessage, from: j)
            guard bob.chi * rj - gammaU == Secp256k1.Point(base: d.0) else {
                throw .abortAndBan(party: j, reason: .nonceConsistencyCheckFailed)
            }
            guard bob.chi * pkj - gammaV == Secp256k1.Point(base: d.1) else {
                throw .abortAndBan(party: j, reason: .keyConsistencyCheckFailed)
            }
            bigR += rj
            publicKeySum += pkj
            phiSum += psi
            uCross += c.0 + d.0
            yCross += c.1 + d.1
        }
        guard publicKeySum == round1.derivedKey else {
            let blamed = parameters.coSigners.count == 1 ? parameters.coSigners.first : nil
            throw .abort(party: blamed, reason: .publicKeyMismatch)
        }
        guard let encodedR = try? bigR.compressed(), let rx = try? Secp256k1.Scalar(reducing: encodedR[1...]),
              !rx.isZero
        else { throw .abort(party: nil, reason: .identityPoint) }
        let u = round1.r * phiSum + uCross
        let y = sk * phiSum + yCross
        return DKLsPresignature(
            keyId: keyshare.keyId, generation: keyshare.generation, fsid: fsid, signers: parameters.signers,
            partyIndex: i, pathBytes: parameters.path.bytes, derivedKey: round1.derivedKey, nonce: bigR,
            secrets: .init(phi: round1.phi, u: u, y: y))
    }
}
