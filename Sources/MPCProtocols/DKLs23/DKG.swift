import MPCCrypto

/// The DKLs23 DKG engine (spec §12), keygen mode: three rounds with all n parties. Each round is a
/// function from the previous state and the round's messages to the next state and the messages to
/// send; nothing is mutated, so a failed call leaves the state usable for nothing else but also
/// unchanged (a failure ends the session).
public enum DKLsDKG {
    /// What the session layer hands the DKG.
    public struct Parameters: Sendable {
        public let partyCount: Int
        public let threshold: Int
        public let partyIndex: PartyIndex
        /// The session's fresh 32-byte instance id.
        public let instanceId: [UInt8]
        /// The hash of the signed setup message.
        public let setupHash: [UInt8]

        public init(partyCount: Int, threshold: Int, partyIndex: PartyIndex, instanceId: [UInt8], setupHash: [UInt8])
            throws(ProtocolError) {
            guard (2...255).contains(partyCount), (2...partyCount).contains(threshold), Int(partyIndex) < partyCount,
                  instanceId.count == 32, setupHash.count == 32
            else { throw .invalidInput(.invalidParameters) }
            self.partyCount = partyCount
            self.threshold = threshold
            self.partyIndex = partyIndex
            self.instanceId = instanceId
            self.setupHash = setupHash
        }

        var peers: [PartyIndex] { (0..<PartyIndex(partyCount)).filter { $0 != partyIndex } }
        var everyone: [PartyIndex] { (0..<PartyIndex(partyCount)).map { $0 } }
    }

    static let operationKeygen: UInt8 = 1
    static let round1BroadcastSize = 64
    static let round1DirectSize = 32 + EndemicOT.message1Size
    static let round2DirectSize = 32 * 4 + EndemicOT.message2Size
    static let round3BroadcastSize = 32 + 2 * SchnorrProof.size

    static func round2BroadcastSize(threshold: Int) -> Int { 66 * threshold + 192 }

    /// Round 1: commitments, zero-seed commitments and base-OT message 1 toward every peer.
    public static func start<R: RandomNumberGenerator>(_ parameters: Parameters, using rng: inout R)
        throws(ProtocolError) -> (Round1State, [ProtocolMessage]) {
        let i = parameters.partyIndex
        let context = DKLsHash.h("dkg/ctx", [operationKeygen], parameters.setupHash, parameters.instanceId,
                                 [UInt8(parameters.partyCount)], [UInt8(parameters.threshold)], [])
        let nonce = rng.randomBytes(count: 32), salt = rng.randomBytes(count: 32)
        let f = SecretPolynomial.random(degreeBelow: parameters.threshold, constant: nil, using: &rng)
        let g = SecretPolynomial.random(degreeBelow: parameters.threshold, constant: nil, using: &rng)
        let chainCodePart = rng.randomBytes(count: 32)
        let aCommitments = f.commitments, bCommitments = g.commitments
        let aEncoded = try DKLsHash.enc(aCommitments)
        let bEncoded = try DKLsHash.enc(bCommitments)
        let commitment = DKLsHash.h("dkg/commit", context, [i], nonce, aEncoded, bEncoded, chainCodePart, salt)
        var messages = [ProtocolMessage(tag: DKLsTag.dkgRound1Broadcast, from: i, to: nil, payload: nonce + commitment)]
        var peers: [PartyIndex: Round1State.PeerState] = [:]
        for j in parameters.peers {
            let sigma = rng.randomBytes(count: 32)
            let zeroCommitment = DKLsHash.h("dkg/zcommit", context, [i], [j], sigma)
            let delta = rng.randomBytes(count: 32)
            let popf = DKLsHash.h("dkg/popf", context, [j], [i], nonce)
            let (receiver, otMessage) = try EndemicOT.Receiver.start(popfContext: popf, choices: delta, using: &rng)
            peers[j] = Round1State.PeerState(sigma: sigma, delta: delta, otReceiver: receiver)
            messages.append(ProtocolMessage(tag: DKLsTag.dkgRound1Direct, from: i, to: j, payload: zeroCommitment + otMessage))
        }
        let state = Round1State(parameters: parameters, context: context, nonce: nonce, salt: salt, f: f, g: g,
                                chainCodePart: chainCodePart, aEncoded: aEncoded, bEncoded: bEncoded,
                                commitment: commitment, peers: peers)
        return (state, messages)
    }

    /// Party i's state after round 1.
    public struct Round1State: Sendable {
        struct PeerState: Sendable {
            let sigma: [UInt8]
            let delta: [UInt8]
            let otReceiver: EndemicOT.Receiver
        }

        let parameters: Parameters
        let context: [UInt8]
        let nonce: [UInt8]
        let salt: [UInt8]
        let f: SecretPolynomial
        let g: SecretPolynomial
        let chainCodePart: [UInt8]
        let aEncoded: [UInt8]
        let bEncoded: [UInt8]
        let commitment: [UInt8]
        let peers: [PartyIndex: PeerState]

        /// Round 2: the final session id, evaluation points, proofs, openings of the commitments,
        /// shares and base-OT message 2 toward every peer.
        public func round2<R: RandomNumberGenerator>(_ messages: [ProtocolMessage], using rng: inout R)
            throws(ProtocolError) -> (Round2State, [ProtocolMessage]) {
            let i = parameters.partyIndex
            let broadcasts = try RoundInbox(tag: DKLsTag.dkgRound1Broadcast, broadcast: true, receiver: i,
                                            senders: Set(parameters.peers)).collect(messages)
            let directs = try RoundInbox(tag: DKLsTag.dkgRound1Direct, broadcast: false, receiver: i,
                                         senders: Set(parameters.peers)).collect(messages)
            var nonces: [PartyIndex: [UInt8]] = [i: nonce], commitments: [PartyIndex: [UInt8]] = [i: commitment]
            for j in parameters.peers {
                let payload = broadcasts[j] ?? []
                guard payload.count == round1BroadcastSize else { throw .abort(party: j, reason: .malformedMessage) }
                nonces[j] = Array(payload[0..<32])
                commitments[j] = Array(payload[32..<64])
            }
            for j in parameters.peers where (directs[j] ?? []).count != round1DirectSize {
                throw .abort(party: j, reason: .malformedMessage)
            }
            var fsidInput: [UInt8] = []
            for k in parameters.everyone {
                fsidInput += [k] + (nonces[k] ?? []) + (commitments[k] ?? [])
            }
            let fsid = DKLsHash.h("dkg/fsid", context, DKLsHash.h("dkg/prior", []), fsidInput)
            let points = parameters.everyone.map { DKLsHash.hq("dkg/x", fsid, [$0]) }
            guard points.allSatisfy({ !$0.isZero }), Set(points.map(\.bytes)).count == points.count else {
                throw .abort(party: nil, reason: .collidingEvaluationPoints)
            }
            let aZero = Secp256k1.Point(base: f.coefficients[0]), bZero = Secp256k1.Point(base: g.coefficients[0])
            let proofX = try SchnorrProof.prove(context: fsid, label: [i] + Array("x".utf8), secret: f.coefficients[0],
                                                publicPoint: aZero, using: &rng)
            let proofV = try SchnorrProof.prove(context: fsid, label: [i] + Array("v".utf8), secret: g.coefficients[0],
                                                publicPoint: bZero, using: &rng)
            let broadcast = aEncoded + proofX + bEncoded + proofV + chainCodePart + salt
            var out = [ProtocolMessage(tag: DKLsTag.dkgRound2Broadcast, from: i, to: nil, payload: broadcast)]
            var senders: [PartyIndex: EndemicOT.Sender] = [:]
            var zeroCommitments: [PartyIndex: [UInt8]] = [:]
            for j in parameters.peers {
                guard let direct = directs[j], let peer = peers[j], let peerNonce = nonces[j] else { continue }
                zeroCommitments[j] = Array(direct[0..<32])
                let popf = DKLsHash.h("dkg/popf", context, [i], [j], peerNonce)
                let (sender, otMessage) = try EndemicOT.Sender.respond(popfContext: popf, message1: Array(direct[32...]),
                                                                       from: j, using: &rng)
                senders[j] = sender
                let payload = fsid + f.evaluate(at: points[Int(j)]).bytes + g.evaluate(at: points[Int(j)]).bytes
                    + peer.sigma + otMessage
                out.append(ProtocolMessage(tag: DKLsTag.dkgRound2Direct, from: i, to: j, payload: payload))
            }
            let state = Round2State(round1: self, nonces: nonces, commitments: commitments, fsid: fsid, points: points,
                                    ownBroadcast: broadcast, zeroCommitments: zeroCommitments, otSenders: senders)
            return (state, out)
        }
    }

    /// Party i's state after round 2.
    public struct Round2State: Sendable {
        let round1: Round1State
        let nonces: [PartyIndex: [UInt8]]
        let commitments: [PartyIndex: [UInt8]]
        let fsid: [UInt8]
        let points: [Secp256k1.Scalar]
        let ownBroadcast: [UInt8]
        let zeroCommitments: [PartyIndex: [UInt8]]
        let otSenders: [PartyIndex: EndemicOT.Sender]
    }
}
