import MPCCrypto

/// The DKLs23 DKG engine (spec §12): keygen, refresh/recovery and import, three rounds with all n
/// parties. Each round is a function from the previous state and the round's messages to the next
/// state and the messages to send; nothing is mutated, and a failure ends the session.
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
        public let mode: Mode

        public init(partyCount: Int, threshold: Int, partyIndex: PartyIndex, instanceId: [UInt8], setupHash: [UInt8],
                    mode: Mode = .keygen) throws(ProtocolError) {
            guard (2...255).contains(partyCount), (2...partyCount).contains(threshold), Int(partyIndex) < partyCount,
                  instanceId.count == 32, setupHash.count == 32
            else { throw .invalidInput(.invalidParameters) }
            try mode.validate(partyCount: partyCount, threshold: threshold, partyIndex: partyIndex)
            self.partyCount = partyCount
            self.threshold = threshold
            self.partyIndex = partyIndex
            self.instanceId = instanceId
            self.setupHash = setupHash
            self.mode = mode
        }

        var peers: [PartyIndex] { (0..<PartyIndex(partyCount)).filter { $0 != partyIndex } }
        var everyone: [PartyIndex] { (0..<PartyIndex(partyCount)).map { $0 } }

        /// The refresh holders, or nil in the other modes.
        var holders: [PartyIndex]? {
            if case .refresh(let holders, _, _) = mode { return holders }
            return nil
        }
    }

    static let round1BroadcastSize = 64
    static let round1DirectSize = 32 + EndemicOT.message1Size
    static let round2DirectSize = 32 * 4 + EndemicOT.message2Size + SoftSpokenOT.correctionSize
    static let round3BroadcastSize = 32 + 2 * SchnorrProof.size

    /// Atx ‖ [π^x] ‖ Btx ‖ [π^v] ‖ cc_i ‖ salt: keygen 66t + 192, refresh 66t − 34, import 66t + 63.
    static func round2BroadcastSize(threshold t: Int, mode: Mode) -> Int {
        let keyCommitments = mode.sendsKeyConstant ? 33 * t + SchnorrProof.size : 33 * (t - 1)
        let vrfCommitments = mode.sendsVRFConstant ? 33 * t + SchnorrProof.size : 33 * (t - 1)
        return keyCommitments + vrfCommitments + (mode.isKeygen ? 32 : 0) + 32
    }

    /// The constant terms (a_{i,0}, b_{i,0}) of party i's polynomials (nil: random).
    static func constants(_ parameters: Parameters) throws(ProtocolError) -> (Secp256k1.Scalar?, Secp256k1.Scalar?) {
        let i = parameters.partyIndex
        switch parameters.mode {
        case .keygen:
            return (nil, nil)
        case .refresh(let holders, let keyshare, _):
            guard holders.contains(i), let keyshare else { return (.zero, .zero) }
            let lambda = try Lagrange.coefficient(of: i, in: holders, points: keyshare.evaluationPoints)
            return (lambda * keyshare.share, lambda * keyshare.vrfShare)
        case .importKey(let importer, _, _, let privateKey):
            return (i == importer ? privateKey : .zero, nil)
        }
    }

    /// Round 1: commitments, zero-seed commitments and base-OT message 1 toward every peer (after the
    /// PKI, from a refresh holder to a party outside the holders).
    public static func start<R: RandomNumberGenerator>(_ parameters: Parameters, using rng: inout R)
        throws(ProtocolError) -> (Round1State, [ProtocolMessage]) {
        let i = parameters.partyIndex, t = parameters.threshold, mode = parameters.mode
        let context = DKLsHash.h("dkg/ctx", [mode.operation], parameters.setupHash, parameters.instanceId,
                                 [UInt8(parameters.partyCount)], [UInt8(t)], try mode.keyId())
        let nonce = rng.randomBytes(count: 32), salt = rng.randomBytes(count: 32)
        let (keyConstant, vrfConstant) = try constants(parameters)
        let f = SecretPolynomial.random(degreeBelow: t, constant: keyConstant, using: &rng)
        let g = SecretPolynomial.random(degreeBelow: t, constant: vrfConstant, using: &rng)
        let chainCodePart = mode.isKeygen ? rng.randomBytes(count: 32) : []
        let aEncoded = try DKLsHash.enc(Array(f.commitments[(mode.sendsKeyConstant ? 0 : 1)...]))
        let bEncoded = try DKLsHash.enc(Array(g.commitments[(mode.sendsVRFConstant ? 0 : 1)...]))
        let commitment = DKLsHash.h("dkg/commit", context, [i], nonce, aEncoded, bEncoded, chainCodePart, salt)

        var ownPKI: PublicKeyInfo?
        if let holders = parameters.holders, case .refresh(_, let keyshare?, _) = mode {
            ownPKI = try PublicKeyInfo(keyshare: keyshare, holders: holders)
        }
        var messages = [ProtocolMessage(tag: DKLsTag.dkgRound1Broadcast, from: i, to: nil, payload: nonce + commitment)]
        var peers: [PartyIndex: Round1State.PeerState] = [:]
        for j in parameters.peers {
            let sigma = rng.randomBytes(count: 32)
            let zeroCommitment = DKLsHash.h("dkg/zcommit", context, [i], [j], sigma)
            let delta = rng.randomBytes(count: 32)
            let popf = DKLsHash.h("dkg/popf", context, [j], [i], nonce)
            let (receiver, otMessage) = try EndemicOT.Receiver.start(popfContext: popf, choices: delta, using: &rng)
            peers[j] = Round1State.PeerState(sigma: sigma, delta: delta, otReceiver: receiver)
            var payload: [UInt8] = []
            if let holders = parameters.holders, holders.contains(i), !holders.contains(j), let ownPKI {
                payload += ownPKI.encoded
            }
            payload += zeroCommitment + otMessage
            messages.append(ProtocolMessage(tag: DKLsTag.dkgRound1Direct, from: i, to: j, payload: payload))
        }
        let state = Round1State(parameters: parameters, context: context, nonce: nonce, salt: salt, f: f, g: g,
                                chainCodePart: chainCodePart, aEncoded: aEncoded, bEncoded: bEncoded,
                                commitment: commitment, peers: peers, ownPKI: ownPKI)
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
        /// A refresh party's own view of the PKI (nil without a keyshare, and outside refresh).
        let ownPKI: PublicKeyInfo?
        /// `round2` runs once (it evaluates the secret polynomials at points derived from the peers).
        let once = ConsumeOnce()
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
        /// Bob's SoftSpokenOT setup toward every peer (its GGM corrections went out in round 2).
        let otReceivers: [PartyIndex: SoftSpokenOT.ReceiverSetup]
        /// The agreed PKI in a refresh.
        let pki: PublicKeyInfo?
        /// `round3` runs once.
        let once = ConsumeOnce()
    }
}
