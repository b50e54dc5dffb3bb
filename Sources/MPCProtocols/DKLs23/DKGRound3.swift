import MPCCrypto

extension DKLsDKG.Round2State {
    /// Round 3: open and check every commitment and proof, check every received share against the
    /// Feldman commitments, finish the base OTs and the punctured GGM trees (dkls23.md §8.1), compute the
    /// shares and the transcript hash TH, and prove knowledge of the new shares under TH.
    public func round3<R: RandomNumberGenerator>(_ messages: [ProtocolMessage], using rng: inout R)
        throws(ProtocolError) -> (DKLsDKG.Round3State, [ProtocolMessage]) {
        let parameters = round1.parameters
        let i = parameters.partyIndex, t = parameters.threshold
        let peers = Set(parameters.peers)
        var broadcasts = try RoundInbox(tag: DKLsTag.dkgRound2Broadcast, broadcast: true, receiver: i, senders: peers)
            .collect(messages)
        broadcasts[i] = ownBroadcast
        let directs = try RoundInbox(tag: DKLsTag.dkgRound2Direct, broadcast: false, receiver: i, senders: peers)
            .collect(messages)
        // Lengths first (base-OT message 2 and the GGM corrections): a short message is Abort(sender)
        // and leaves this state usable.
        for j in parameters.peers where (directs[j] ?? []).count != DKLsDKG.round2DirectSize {
            throw .abort(party: j, reason: .malformedMessage)
        }
        try once.consume()

        // Steps 1–3: every party's opening, commitment and proofs.
        var aCommitments: [[Secp256k1.Point]] = [], bCommitments: [[Secp256k1.Point]] = []
        var chainCodeParts: [UInt8] = []
        for k in parameters.everyone {
            let opened = try open(broadcasts[k] ?? [], from: k)
            aCommitments.append(opened.a)
            bCommitments.append(opened.b)
            chainCodeParts += opened.chainCodePart
        }

        // Steps 4–8: every peer's direct message.
        let ownPoint = points[Int(i)]
        var share = round1.f.evaluate(at: ownPoint), vrfShare = round1.g.evaluate(at: ownPoint)
        var pairwise: [PartyIndex: DKLsKeyshare.PairwiseSetup] = [:]
        for j in parameters.peers {
            var reader = ByteReader(directs[j] ?? [], from: j)
            guard (directs[j] ?? []).count == DKLsDKG.round2DirectSize else { throw .abort(party: j, reason: .malformedMessage) }
            guard Bits.equal(try reader.read(32), fsid) else { throw .abort(party: j, reason: .transcriptMismatch) }
            let fShare = try reader.readSecp256k1Scalar()
            let gShare = try reader.readSecp256k1Scalar()
            let sigma = try reader.read(32)
            let otMessage = try reader.read(EndemicOT.message2Size)
            let corrections = try reader.read(SoftSpokenOT.correctionSize)
            try reader.finish()
            guard Secp256k1.Point(base: fShare) == Feldman.evaluate(aCommitments[Int(j)], at: ownPoint),
                  Secp256k1.Point(base: gShare) == Feldman.evaluate(bCommitments[Int(j)], at: ownPoint)
            else { throw .abort(party: j, reason: .invalidShare) }
            guard let expected = zeroCommitments[j],
                  DKLsHash.h("dkg/zcommit", round1.context, [j], [i], sigma) == expected
            else { throw .abort(party: j, reason: .commitmentMismatch) }
            guard let peer = round1.peers[j], let receiver = otReceivers[j] else { throw .abort(party: j, reason: .missingMessages) }
            let (low, high) = i < j ? (i, j) : (j, i)
            let (lowSigma, highSigma) = i < j ? (peer.sigma, sigma) : (sigma, peer.sigma)
            let zeroSeed = DKLsHash.h("dkg/zseed", fsid, [low], [high], lowSigma, highSigma)
            let chosen = try peer.otReceiver.keys(keyContext: DKLsHash.h("dkg/eotkey", fsid, [j], [i]),
                                                  message2: otMessage, from: j)
            let sender = try SoftSpokenOT.SenderSetup(delta: peer.delta, corrections: corrections, chosenKeys: chosen, from: j)
            pairwise[j] = DKLsKeyshare.PairwiseSetup(zeroSeed: zeroSeed, receiver: receiver, sender: sender)
            share += fShare
            vrfShare += gShare
        }

        // Steps 9–12: joint commitments, public shares, public keys, chain code.
        let jointA = (0..<t).map { m in aCommitments.reduce(Secp256k1.Point.identity) { $0 + $1[m] } }
        let jointB = (0..<t).map { m in bCommitments.reduce(Secp256k1.Point.identity) { $0 + $1[m] } }
        let publicKey = jointA[0], vrfPublicKey = jointB[0]
        let chainCode: [UInt8]
        switch parameters.mode {
        case .keygen:
            chainCode = DKLsHash.h("dkg/chaincode", fsid, chainCodeParts)
        case .refresh:
            guard let pki, publicKey == pki.publicKey, vrfPublicKey == pki.vrfPublicKey else {
                throw .abort(party: nil, reason: .publicKeyMismatch)
            }
            chainCode = pki.chainCode
        case .importKey(_, let importedKey, let importedChainCode, _):
            guard publicKey == importedKey else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            chainCode = importedChainCode
        }
        let publicShares = points.map { Feldman.evaluate(jointA, at: $0) }
        let vrfPublicShares = points.map { Feldman.evaluate(jointB, at: $0) }
        guard !publicKey.isIdentity, !vrfPublicKey.isIdentity,
              !publicShares.contains(where: \.isIdentity), !vrfPublicShares.contains(where: \.isIdentity)
        else { throw .abort(party: nil, reason: .identityPoint) }
        guard Secp256k1.Point(base: share) == publicShares[Int(i)],
              Secp256k1.Point(base: vrfShare) == vrfPublicShares[Int(i)]
        else { throw .abort(party: nil, reason: .invalidShare) }
        let encodedKey = try DKLsHash.enc(publicKey)
        let keyId = DKLsHash.h("key-id", encodedKey)

        // Step 13–14: transcript hash and proofs of the new shares.
        var lengthPrefixed: [UInt8] = []
        for k in parameters.everyone {
            let bytes = broadcasts[k] ?? []
            lengthPrefixed += DKLsHash.u32(UInt32(bytes.count)) + bytes
        }
        let transcript = DKLsHash.h("dkg/transcript", fsid, lengthPrefixed, encodedKey, try DKLsHash.enc(vrfPublicKey),
                                    chainCode, points.flatMap(\.bytes))
        let proofS = try SchnorrProof.prove(context: transcript, label: [i] + Array("s".utf8), secret: share,
                                            publicPoint: publicShares[Int(i)], using: &rng)
        let proofV = try SchnorrProof.prove(context: transcript, label: [i] + Array("v".utf8), secret: vrfShare,
                                            publicPoint: vrfPublicShares[Int(i)], using: &rng)
        let keyshare = DKLsKeyshare(
            partyCount: parameters.partyCount, threshold: t, partyIndex: i, keyId: keyId, generation: transcript,
            publicKey: publicKey, rootChainCode: chainCode, vrfPublicKey: vrfPublicKey, evaluationPoints: points,
            publicShares: publicShares, vrfPublicShares: vrfPublicShares, share: share, vrfShare: vrfShare,
            pairwise: pairwise)
        let message = ProtocolMessage(tag: DKLsTag.dkgRound3Broadcast, from: i, to: nil,
                                      payload: transcript + proofS + proofV)
        return (DKLsDKG.Round3State(keyshare: keyshare), [message])
    }

    /// Parses party k's round-2 broadcast, checks it against k's round-1 commitment and proofs, and
    /// completes the commitments with the implied constants of the mode (dkls23.md §12.1).
    private func open(_ payload: [UInt8], from k: PartyIndex) throws(ProtocolError)
        -> (a: [Secp256k1.Point], b: [Secp256k1.Point], chainCodePart: [UInt8]) {
        let t = round1.parameters.threshold, mode = round1.parameters.mode
        guard payload.count == DKLsDKG.round2BroadcastSize(threshold: t, mode: mode) else {
            throw .abort(party: k, reason: .malformedMessage)
        }
        let aCount = mode.sendsKeyConstant ? t : t - 1, bCount = mode.sendsVRFConstant ? t : t - 1
        var reader = ByteReader(payload, from: k)
        let aEncoded = try reader.read(33 * aCount)
        let proofX = mode.sendsKeyConstant ? try reader.read(SchnorrProof.size) : []
        let bEncoded = try reader.read(33 * bCount)
        let proofV = mode.sendsVRFConstant ? try reader.read(SchnorrProof.size) : []
        let chainCodePart = mode.isKeygen ? try reader.read(32) : []
        let salt = try reader.read(32)
        try reader.finish()
        guard let nonce = nonces[k], let commitment = commitments[k],
              Bits.equal(DKLsHash.h("dkg/commit", round1.context, [k], nonce, aEncoded, bEncoded, chainCodePart, salt),
                         commitment)
        else { throw .abort(party: k, reason: .commitmentMismatch) }
        var pointReader = ByteReader(aEncoded + bEncoded, from: k)
        var a = try (0..<aCount).map { _ throws(ProtocolError) in try pointReader.readSecp256k1Point() }
        var b = try (0..<bCount).map { _ throws(ProtocolError) in try pointReader.readSecp256k1Point() }
        if mode.sendsKeyConstant {
            try SchnorrProof.verify(proofX, context: fsid, label: [k] + Array("x".utf8), publicPoint: a[0], from: k)
        } else {
            a.insert(try impliedConstants(of: k).key, at: 0)
        }
        if mode.sendsVRFConstant {
            try SchnorrProof.verify(proofV, context: fsid, label: [k] + Array("v".utf8), publicPoint: b[0], from: k)
        } else {
            b.insert(try impliedConstants(of: k).vrf, at: 0)
        }
        return (a, b, chainCodePart)
    }

    /// The commitments A_{k,0}, B_{k,0} that every party computes from public data (refresh: λ_k^H·S_k
    /// and λ_k^H·V_k for holders, O otherwise; import: P_imp for the importer, O otherwise).
    private func impliedConstants(of k: PartyIndex) throws(ProtocolError) -> (key: Secp256k1.Point, vrf: Secp256k1.Point) {
        switch round1.parameters.mode {
        case .keygen:
            return (.identity, .identity)
        case .refresh:
            guard let pki, pki.holders.contains(k) else { return (.identity, .identity) }
            let lambda = try pki.lagrange(k)
            return (lambda * (pki.shares[k] ?? .identity), lambda * (pki.vrfShares[k] ?? .identity))
        case .importKey(let importer, let publicKey, _, _):
            return (k == importer ? publicKey : .identity, .identity)
        }
    }
}

extension DKLsDKG {
    /// Party i's state after round 3: the keyshare, pending every peer's confirmation.
    public struct Round3State: Sendable {
        let keyshare: DKLsKeyshare

        /// Checks every peer's transcript hash and share proofs; returns the keyshare (to be stored
        /// as *staged* until the session's reconcile step).
        public func finish(_ messages: [ProtocolMessage]) throws(ProtocolError) -> DKLsKeyshare {
            let i = keyshare.partyIndex
            let broadcasts = try RoundInbox(tag: DKLsTag.dkgRound3Broadcast, broadcast: true, receiver: i,
                                            senders: Set(keyshare.peers)).collect(messages)
            for j in keyshare.peers {
                let payload = broadcasts[j] ?? []
                guard payload.count == round3BroadcastSize else { throw .abort(party: j, reason: .malformedMessage) }
                guard Bits.equal(Array(payload[0..<32]), keyshare.generation) else {
                    throw .abort(party: j, reason: .transcriptMismatch)
                }
                try SchnorrProof.verify(Array(payload[32..<96]), context: keyshare.generation, label: [j] + Array("s".utf8),
                                        publicPoint: keyshare.publicShares[Int(j)], from: j)
                try SchnorrProof.verify(Array(payload[96..<160]), context: keyshare.generation, label: [j] + Array("v".utf8),
                                        publicPoint: keyshare.vrfPublicShares[Int(j)], from: j)
            }
            return keyshare
        }
    }
}
