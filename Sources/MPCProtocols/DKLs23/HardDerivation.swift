import MPCCrypto

/// Hard derivation (dkls23.md §15): a threshold DDH-VRF on the keygen-shared VRF key v gives a child key
/// P′ = P + δ·G that nobody without t shares of v can link to P. One round: every participant
/// broadcasts ctx ‖ D_i ‖ DLEQ proof (129 bytes) and then folds δ into its keyshare.
///
/// **Not BIP32 hardened derivation.** Every participant learns the tweak δ (it is also the difference
/// between its child and parent shares), so the child private key plus δ is the parent private key:
/// exporting a hard child to a participant is equivalent to exporting the parent to it, and a leaked
/// child key endangers the parent. BIP32 hardened derivation is designed to prevent exactly that.
/// What hard derivation does give: δ is pseudorandom to outsiders, so outsiders cannot link P′ to P
/// (dkls23.md §21 Q7).
///
/// Determinism: Y = Σ_{k∈S} λ_k^S·v_k·Hpt = v·Hpt for every participant set S of size ≥ t, and δ, cc′
/// depend only on (Y, P, path), so the same path gives the same child for every set and after any
/// refresh of the parent. After a parent refresh, existing children must be re-derived (dkls23.md §19.11).
public enum DKLsHardDerivation {
    /// ctx ‖ enc(D_i) ‖ DLEQ proof (dkls23.md §18).
    public static let messageSize = 32 + 33 + DLEQProof.size

    /// What the session layer hands a participant.
    public struct Parameters: Sendable {
        public let keyshare: DKLsKeyshare
        /// The participant set S, ascending, t ≤ #S ≤ n, containing this party.
        public let participants: [PartyIndex]
        public let instanceId: [UInt8]
        public let setupHash: [UInt8]
        /// The path; hardened markers are allowed (`DerivationPath(_:allowHardened: true)`).
        public let path: DerivationPath

        public init(keyshare: DKLsKeyshare, participants: [PartyIndex], instanceId: [UInt8], setupHash: [UInt8],
                    path: DerivationPath) throws(ProtocolError) {
            let sorted = Array(Set(participants)).sorted()
            guard sorted.count == participants.count, sorted.count >= keyshare.threshold,
                  sorted.allSatisfy({ Int($0) < keyshare.partyCount }), sorted.contains(keyshare.partyIndex),
                  instanceId.count == 32, setupHash.count == 32, path.indices.count <= 255
            else { throw .invalidInput(.invalidParameters) }
            self.keyshare = keyshare
            self.participants = sorted
            self.instanceId = instanceId
            self.setupHash = setupHash
            self.path = path
        }

        var me: PartyIndex { keyshare.partyIndex }
        var others: [PartyIndex] { participants.filter { $0 != keyshare.partyIndex } }
    }

    /// Steps 1–4: Hpt, ctx, the partial evaluation D_i = λ_i^S·v_i·Hpt and its DLEQ proof against
    /// W_i = λ_i^S·V_i. Returns the state and the one broadcast (tag `DKLsTag.hardDerivation`).
    public static func start<R: RandomNumberGenerator>(_ parameters: Parameters, using rng: inout R)
        throws(ProtocolError) -> (State, ProtocolMessage) {
        let keyshare = parameters.keyshare, i = parameters.me
        let pathBytes = parameters.path.bytes
        let encodedKey = try DKLsHash.enc(keyshare.publicKey)
        let hpt = try DKLsHash.hashToCurve("hd/h2c", encodedKey + pathBytes)
        let context = DKLsHash.h("hd/ctx", parameters.setupHash, parameters.instanceId, keyshare.keyId,
                                 keyshare.generation, DKLsHash.encode(set: parameters.participants), pathBytes)
        let lambda = try Lagrange.coefficient(of: i, in: parameters.participants, points: keyshare.evaluationPoints)
        let e = lambda * keyshare.vrfShare
        let d = e * hpt
        let w = lambda * keyshare.vrfPublicShares[Int(i)]
        let proof = try DLEQProof.prove(context: context, label: [i], secret: e, base: hpt, a: w, b: d, using: &rng)
        var writer = ByteWriter(capacity: messageSize)
        writer.append(context)
        try writer.append(d)
        writer.append(proof)
        let state = State(parameters: parameters, hashPoint: hpt, context: context, partial: d)
        return (state, ProtocolMessage(tag: DKLsTag.hardDerivation, from: i, to: nil, payload: writer.bytes))
    }

    /// A participant's state after sending its broadcast (public values only).
    public struct State: Sendable {
        let parameters: Parameters
        /// Hpt = H2C("hd/h2c", enc(P) ‖ path_bytes).
        let hashPoint: Secp256k1.Point
        let context: [UInt8]
        /// This party's own D_i.
        let partial: Secp256k1.Point

        /// Steps 5–9: checks every other participant's ctx and DLEQ proof (Abort(k) on failure),
        /// Y = Σ D_k, δ, cc′ and the child keyshare (staged: store it only after reconcile).
        public func finish(_ messages: [ProtocolMessage]) throws(ProtocolError) -> DKLsKeyshare {
            let keyshare = parameters.keyshare, i = parameters.me
            let payloads = try RoundInbox(tag: DKLsTag.hardDerivation, broadcast: true, receiver: i,
                                          senders: Set(parameters.others)).collect(messages)
            var y = partial
            for k in parameters.others {
                let payload = payloads[k] ?? []
                guard payload.count == messageSize else { throw .abort(party: k, reason: .malformedMessage) }
                var reader = ByteReader(payload, from: k)
                guard Bits.equal(try reader.read(32), context) else { throw .abort(party: k, reason: .sessionMismatch) }
                let dk = try reader.readSecp256k1Point()
                let proof = try reader.read(DLEQProof.size)
                try reader.finish()
                let lambda = try Lagrange.coefficient(of: k, in: parameters.participants,
                                                      points: keyshare.evaluationPoints)
                let wk = lambda * keyshare.vrfPublicShares[Int(k)]
                try DLEQProof.verify(proof, context: context, label: [k], base: hashPoint, a: wk, b: dk, from: k)
                y += dk
            }
            let derivation = try DKLsHardDerivation.child(vrfOutput: y, publicKey: keyshare.publicKey,
                                                          pathBytes: parameters.path.bytes)
            return try keyshare.hardChild(tweak: derivation.tweak, publicKey: derivation.publicKey,
                                          chainCode: derivation.chainCode)
        }
    }

    /// Steps 6–8: δ = Hq("hd/tweak"; enc(Y), enc(P), pb) ≠ 0, cc′ = H("hd/chaincode"; …), P′ = P + δ·G ≠ O.
    static func child(vrfOutput y: Secp256k1.Point, publicKey: Secp256k1.Point, pathBytes: [UInt8])
        throws(ProtocolError) -> (tweak: Secp256k1.Scalar, publicKey: Secp256k1.Point, chainCode: [UInt8]) {
        let encodedY = try DKLsHash.enc(y), encodedP = try DKLsHash.enc(publicKey)
        let tweak = DKLsHash.hq("hd/tweak", encodedY, encodedP, pathBytes)
        guard !tweak.isZero else { throw .abort(party: nil, reason: .zeroScalar) }
        let chainCode = DKLsHash.h("hd/chaincode", encodedY, encodedP, pathBytes)
        let child = publicKey + Secp256k1.Point(base: tweak)
        guard !child.isIdentity else { throw .abort(party: nil, reason: .identityPoint) }
        return (tweak, child, chainCode)
    }
}

extension DKLsKeyshare {
    /// Step 9: the parent with δ folded into every Shamir share (shifting the shared polynomial by the
    /// constant δ) and new key id and generation. x_k, v_i, V, V_k, zero seeds and OT setups are kept.
    func hardChild(tweak: Secp256k1.Scalar, publicKey child: Secp256k1.Point, chainCode: [UInt8])
        throws(ProtocolError) -> DKLsKeyshare {
        let offset = Secp256k1.Point(base: tweak)
        let shares = publicShares.map { $0 + offset }
        let childShare = share + tweak
        guard !childShare.isZero, !shares.contains(where: \.isIdentity) else {
            throw .abort(party: nil, reason: .identityPoint)
        }
        let encodedChild = try DKLsHash.enc(child)
        let result = DKLsKeyshare(
            partyCount: partyCount, threshold: threshold, partyIndex: partyIndex,
            keyId: DKLsHash.h("key-id", encodedChild), generation: DKLsHash.h("hd/gen", generation, encodedChild),
            publicKey: child, rootChainCode: chainCode, vrfPublicKey: vrfPublicKey,
            evaluationPoints: evaluationPoints, publicShares: shares, vrfPublicShares: vrfPublicShares,
            share: childShare, vrfShare: vrfShare, pairwise: pairwise)
        try result.validate()
        return result
    }
}
