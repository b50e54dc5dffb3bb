import MPCCrypto

/// DKLs23 signing, Protocol 3.6 (spec §13): rounds 1–2 need no message and end in a single-use
/// `DKLsPresignature`; the finish is one broadcast per signer, then anyone combines.
public enum DKLsSign {
    static let round1BroadcastSize = 96
    static let round2DirectSize = 32 + 33 + 32 + 33 + 33 + 33 + 32 + RVOLE.messageSize
    static let finishSize = 128

    /// What the session layer hands a signer.
    public struct Parameters: Sendable {
        public let keyshare: DKLsKeyshare
        /// The signer set S, ascending, t ≤ #S ≤ n, containing this party.
        public let signers: [PartyIndex]
        public let instanceId: [UInt8]
        public let setupHash: [UInt8]
        /// The soft derivation path ("m" for the root key).
        public let path: DerivationPath

        public init(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceId: [UInt8], setupHash: [UInt8],
                    path: DerivationPath = .root) throws(ProtocolError) {
            let sorted = Array(Set(signers)).sorted()
            guard sorted.count == signers.count, sorted.count >= keyshare.threshold,
                  sorted.allSatisfy({ Int($0) < keyshare.partyCount }), sorted.contains(keyshare.partyIndex),
                  instanceId.count == 32, setupHash.count == 32
            else { throw .invalidInput(.invalidParameters) }
            self.keyshare = keyshare
            self.signers = sorted
            self.instanceId = instanceId
            self.setupHash = setupHash
            self.path = path
        }

        var me: PartyIndex { keyshare.partyIndex }
        var coSigners: [PartyIndex] { signers.filter { $0 != keyshare.partyIndex } }
    }

    /// Round 1: commit to R_i and start one RVOLE as Bob toward every co-signer.
    public static func start<R: RandomNumberGenerator>(_ parameters: Parameters, using rng: inout R)
        throws(ProtocolError) -> (Round1State, [ProtocolMessage]) {
        let keyshare = parameters.keyshare, i = parameters.me
        let derived = try parameters.path.derive(publicKey: keyshare.publicKey, chainCode: keyshare.rootChainCode)
        let context = DKLsHash.h("sign/ctx", parameters.setupHash, parameters.instanceId, keyshare.keyId,
                                 keyshare.generation, DKLsHash.encode(set: parameters.signers), parameters.path.bytes,
                                 try DKLsHash.enc(derived.publicKey))
        let nonce = rng.randomBytes(count: 32), salt = rng.randomBytes(count: 32)
        let r = Secp256k1.Scalar.random(using: &rng), phi = Secp256k1.Scalar.random(using: &rng)
        let bigR = Secp256k1.Point(base: r)
        let commitment = DKLsHash.h("sign/commit", context, [i], nonce, try DKLsHash.enc(bigR), salt)
        var messages = [ProtocolMessage(tag: DKLsTag.signRound1Broadcast, from: i, to: nil, payload: context + nonce + commitment)]
        var bobs: [PartyIndex: RVOLE.BobState] = [:]
        for j in parameters.coSigners {
            guard let setup = keyshare.pairwise[j] else { throw .invalidInput(.invalidKeyshare) }
            let prgId = DKLsHash.h("ote/prg", context, [i], [j], nonce)
            let (bob, kosMessage) = RVOLE.sample(setup: setup.receiver, prgId: prgId, using: &rng)
            bobs[j] = bob
            messages.append(ProtocolMessage(tag: DKLsTag.signRound1Direct, from: i, to: j, payload: kosMessage))
        }
        let state = Round1State(parameters: parameters, derivedKey: derived.publicKey, tweak: derived.tweak,
                                context: context, nonce: nonce, salt: salt, r: r, phi: phi, bigR: bigR,
                                commitment: commitment, bobs: bobs)
        return (state, messages)
    }

    /// A signer's state after round 1.
    public struct Round1State: Sendable {
        let parameters: Parameters
        let derivedKey: Secp256k1.Point
        let tweak: Secp256k1.Scalar
        let context: [UInt8]
        let nonce: [UInt8]
        let salt: [UInt8]
        let r: Secp256k1.Scalar
        let phi: Secp256k1.Scalar
        let bigR: Secp256k1.Point
        let commitment: [UInt8]
        let bobs: [PartyIndex: RVOLE.BobState]
        /// `round2` runs once: a second run would repeat the RVOLE with the same OT outputs and a fresh
        /// mask â, which gives a co-signer two equations in (r_i, sk_i).
        let once = ConsumeOnce()

        /// Round 2: context check (first, so a stale keyshare is not mistaken for a cheater), OT-extension
        /// checks as Alice (AbortAndBan on failure), the additive key share sk_i and one RVOLE
        /// multiplication toward every co-signer.
        public func round2<R: RandomNumberGenerator>(_ messages: [ProtocolMessage], using rng: inout R)
            throws(ProtocolError) -> (Round2State, [ProtocolMessage]) {
            let keyshare = parameters.keyshare, i = parameters.me
            let coSigners = Set(parameters.coSigners)
            let broadcasts = try RoundInbox(tag: DKLsTag.signRound1Broadcast, broadcast: true, receiver: i,
                                            senders: coSigners).collect(messages)
            let directs = try RoundInbox(tag: DKLsTag.signRound1Direct, broadcast: false, receiver: i,
                                         senders: coSigners).collect(messages)
            try once.consume()
            var nonces: [PartyIndex: [UInt8]] = [i: nonce], commitments: [PartyIndex: [UInt8]] = [i: commitment]
            for j in parameters.coSigners {
                let payload = broadcasts[j] ?? []
                guard payload.count == round1BroadcastSize else { throw .abort(party: j, reason: .malformedMessage) }
                guard Bits.equal(Array(payload[0..<32]), context) else { throw .abort(party: j, reason: .sessionMismatch) }
                nonces[j] = Array(payload[32..<64])
                commitments[j] = Array(payload[64..<96])
            }
            var fsidInput: [UInt8] = []
            for k in parameters.signers { fsidInput += [k] + (nonces[k] ?? []) + (commitments[k] ?? []) }
            let fsid = DKLsHash.h("sign/fsid", context, fsidInput)

            var zeta = Secp256k1.Scalar.zero
            for j in parameters.coSigners {
                guard let seed = keyshare.pairwise[j]?.zeroSeed else { throw .invalidInput(.invalidKeyshare) }
                let z = DKLsHash.hq("sign/zero", seed, fsid)
                zeta = j > i ? zeta + z : zeta - z
            }
            let lambda = try Lagrange.coefficient(of: i, in: parameters.signers, points: keyshare.evaluationPoints)
            let sk = lambda * (keyshare.share + tweak) + zeta
            let pk = Secp256k1.Point(base: sk)
            let encodedR = try DKLsHash.enc(bigR), encodedPk = try DKLsHash.enc(pk)

            var out: [ProtocolMessage] = []
            var products: [PartyIndex: (Secp256k1.Scalar, Secp256k1.Scalar)] = [:]
            for j in parameters.coSigners {
                guard let setup = keyshare.pairwise[j], let peerNonce = nonces[j], let bob = bobs[j] else {
                    throw .invalidInput(.invalidKeyshare)
                }
                let (c, rvoleMessage) = try RVOLE.multiply(
                    setup: setup.sender, prgId: DKLsHash.h("ote/prg", context, [j], [i], peerNonce),
                    outId: DKLsHash.h("ote/out-id", fsid, [j], [i]), vsid: DKLsHash.h("rvole/sid", fsid, [j], [i]),
                    kosMessage: directs[j] ?? [], from: j, inputs: (r, sk), using: &rng)
                products[j] = c
                let gammaU = try DKLsHash.enc(Secp256k1.Point(base: c.0))
                let gammaV = try DKLsHash.enc(Secp256k1.Point(base: c.1))
                let psi = phi - bob.chi
                let payload = fsid + encodedR + salt + encodedPk + gammaU + gammaV + psi.bytes + rvoleMessage
                out.append(ProtocolMessage(tag: DKLsTag.signRound2Direct, from: i, to: j, payload: payload))
            }
            let state = Round2State(round1: self, nonces: nonces, commitments: commitments, fsid: fsid, sk: sk, pk: pk,
                                    products: products)
            return (state, out)
        }
    }

    /// A signer's state after round 2.
    public struct Round2State: Sendable {
        let round1: Round1State
        let nonces: [PartyIndex: [UInt8]]
        let commitments: [PartyIndex: [UInt8]]
        let fsid: [UInt8]
        let sk: Secp256k1.Scalar
        let pk: Secp256k1.Point
        /// (c^u_{i,j}, c^v_{i,j}) per co-signer j.
        let products: [PartyIndex: (Secp256k1.Scalar, Secp256k1.Scalar)]
        /// `presignature` runs once: two presignatures from one state would share the nonce R.
        let once = ConsumeOnce()
    }
}
