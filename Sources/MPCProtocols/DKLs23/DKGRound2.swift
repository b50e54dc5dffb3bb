import MPCCrypto

extension DKLsDKG.Round1State {
    /// Round 2: the PKI (refresh), the final session id, evaluation points, proofs, the openings of the
    /// commitments, shares and base-OT message 2 with the GGM corrections of SoftSpokenOT (dkls23.md §8.1)
    /// toward every peer.
    public func round2<R: RandomNumberGenerator>(_ messages: [ProtocolMessage], using rng: inout R)
        throws(ProtocolError) -> (DKLsDKG.Round2State, [ProtocolMessage]) {
        let i = parameters.partyIndex, mode = parameters.mode
        let broadcasts = try RoundInbox(tag: DKLsTag.dkgRound1Broadcast, broadcast: true, receiver: i,
                                        senders: Set(parameters.peers)).collect(messages)
        var directs = try RoundInbox(tag: DKLsTag.dkgRound1Direct, broadcast: false, receiver: i,
                                     senders: Set(parameters.peers)).collect(messages)
        try once.consume()
        var nonces: [PartyIndex: [UInt8]] = [i: nonce], commitments: [PartyIndex: [UInt8]] = [i: commitment]
        for j in parameters.peers {
            let payload = broadcasts[j] ?? []
            guard payload.count == DKLsDKG.round1BroadcastSize else { throw .abort(party: j, reason: .malformedMessage) }
            nonces[j] = Array(payload[0..<32])
            commitments[j] = Array(payload[32..<64])
        }
        let pki = try agreeOnPKI(&directs)
        for j in parameters.peers where (directs[j] ?? []).count != DKLsDKG.round1DirectSize {
            throw .abort(party: j, reason: .malformedMessage)
        }
        let prior: [UInt8]
        switch mode {
        case .keygen: prior = []
        case .refresh: prior = pki?.encoded ?? []
        case .importKey(_, let publicKey, let chainCode, _): prior = try DKLsHash.enc(publicKey) + chainCode
        }
        var fsidInput: [UInt8] = []
        for k in parameters.everyone { fsidInput += [k] + (nonces[k] ?? []) + (commitments[k] ?? []) }
        let fsid = DKLsHash.h("dkg/fsid", context, DKLsHash.h("dkg/prior", prior), fsidInput)
        let points = parameters.everyone.map { DKLsHash.hq("dkg/x", fsid, [$0]) }
        guard points.allSatisfy({ !$0.isZero }), Set(points.map(\.bytes)).count == points.count else {
            throw .abort(party: nil, reason: .collidingEvaluationPoints)
        }
        var proofX: [UInt8] = [], proofV: [UInt8] = []
        if mode.sendsKeyConstant {
            proofX = try SchnorrProof.prove(context: fsid, label: [i] + Array("x".utf8), secret: f.coefficients[0],
                                            publicPoint: Secp256k1.Point(base: f.coefficients[0]), using: &rng)
        }
        if mode.sendsVRFConstant {
            proofV = try SchnorrProof.prove(context: fsid, label: [i] + Array("v".utf8), secret: g.coefficients[0],
                                            publicPoint: Secp256k1.Point(base: g.coefficients[0]), using: &rng)
        }
        let broadcast = aEncoded + proofX + bEncoded + proofV + chainCodePart + salt
        var out = [ProtocolMessage(tag: DKLsTag.dkgRound2Broadcast, from: i, to: nil, payload: broadcast)]
        var receivers: [PartyIndex: SoftSpokenOT.ReceiverSetup] = [:]
        var zeroCommitments: [PartyIndex: [UInt8]] = [:]
        for j in parameters.peers {
            guard let direct = directs[j], let peer = peers[j], let peerNonce = nonces[j] else { continue }
            zeroCommitments[j] = Array(direct[0..<32])
            let popf = DKLsHash.h("dkg/popf", context, [i], [j], peerNonce)
            let (sender, otMessage) = try EndemicOT.Sender.respond(popfContext: popf, message1: Array(direct[32...]),
                                                                   from: j, using: &rng)
            // Bob's keys are known now (key_ctx needs only fsid): grow the GGM trees and correct them.
            let keys = try sender.keys(keyContext: DKLsHash.h("dkg/eotkey", fsid, [i], [j]))
            let receiver = SoftSpokenOT.ReceiverSetup.random(using: &rng)
            receivers[j] = receiver
            let corrections = receiver.corrections(zeroKeys: keys.zero, oneKeys: keys.one)
            let payload = fsid + f.evaluate(at: points[Int(j)]).bytes + g.evaluate(at: points[Int(j)]).bytes
                + peer.sigma + otMessage + corrections
            out.append(ProtocolMessage(tag: DKLsTag.dkgRound2Direct, from: i, to: j, payload: payload))
        }
        let state = DKLsDKG.Round2State(round1: self, nonces: nonces, commitments: commitments, fsid: fsid, points: points,
                                        ownBroadcast: broadcast, zeroCommitments: zeroCommitments, otReceivers: receivers,
                                        pki: pki)
        return (state, out)
    }

    /// Refresh: the PKI every party agrees on (dkls23.md §12.3 step 1), with the prefixes stripped from the
    /// holders' direct messages. Nil in the other modes.
    private func agreeOnPKI(_ directs: inout [PartyIndex: [UInt8]]) throws(ProtocolError) -> DKLsDKG.PublicKeyInfo? {
        guard case .refresh(let holders, _, let expectedKey) = parameters.mode else { return nil }
        let i = parameters.partyIndex
        var pki = ownPKI
        if !holders.contains(i) {
            let size = DKLsDKG.PublicKeyInfo.size(holderCount: holders.count)
            var received: [UInt8]?
            for holder in holders {
                guard let payload = directs[holder], payload.count == size + DKLsDKG.round1DirectSize else {
                    throw .abort(party: holder, reason: .malformedMessage)
                }
                let copy = Array(payload[0..<size])
                // Every holder must send the same PKI (and the same as our old keyshare, if we kept one).
                guard received.map({ $0 == copy }) ?? true else { throw .abort(party: nil, reason: .sessionMismatch) }
                received = copy
                directs[holder] = Array(payload[size...])
            }
            guard let received, let holder = holders.first else { throw .abort(party: nil, reason: .missingMessages) }
            let decoded = try DKLsDKG.PublicKeyInfo(decoding: received, from: holder)
            if let own = ownPKI, own.encoded != decoded.encoded { throw .abort(party: nil, reason: .sessionMismatch) }
            pki = decoded
        }
        guard let pki, pki.partyCount == parameters.partyCount, pki.threshold == parameters.threshold,
              pki.holders == holders, pki.publicKey == expectedKey,
              pki.keyId == DKLsHash.h("key-id", try DKLsHash.enc(expectedKey))
        else { throw .abort(party: nil, reason: .sessionMismatch) }
        try pki.checkConsistency()
        return pki
    }
}
