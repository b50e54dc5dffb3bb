import MPCCrypto

/// Runs every party of a DKLs23 protocol in this process, delivering each message to its receivers.
///
/// For tests, benchmarks and tools only: one process holding every share holds the key. `tamper`
/// may rewrite a round's traffic before delivery (round 1, 2, 3); `observe` sees every message sent.
@_spi(InProcess)
public enum DKLsInProcess {
    public typealias Tamper = (Int, [ProtocolMessage]) -> [ProtocolMessage]
    public typealias Observe = (ProtocolMessage) -> Void

    /// The messages `party` receives out of everything sent in a round.
    public static func inbox(of party: PartyIndex, _ sent: [ProtocolMessage]) -> [ProtocolMessage] {
        sent.filter { $0.from != party && ($0.to == nil || $0.to == party) }
    }

    /// A whole keygen among n parties.
    public static func keygen<R: RandomNumberGenerator>(
        partyCount n: Int, threshold t: Int, using rng: inout R,
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> [DKLsKeyshare] {
        try dkg(partyCount: n, threshold: t, modes: Array(repeating: .keygen, count: n), using: &rng,
                tamper: tamper, observe: observe)
    }

    /// A whole DKG run (keygen, refresh/recovery or import) with each party's own view of the mode.
    public static func dkg<R: RandomNumberGenerator>(
        partyCount n: Int, threshold t: Int, modes: [DKLsDKG.Mode], using rng: inout R,
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> [DKLsKeyshare] {
        guard modes.count == n else { throw .invalidInput(.invalidParameters) }
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        var round1: [DKLsDKG.Round1State] = [], sent1: [ProtocolMessage] = []
        for i in 0..<n {
            let parameters = try DKLsDKG.Parameters(partyCount: n, threshold: t, partyIndex: PartyIndex(i),
                                                    instanceId: instance, setupHash: setup, mode: modes[i])
            let (state, out) = try DKLsDKG.start(parameters, using: &rng)
            round1.append(state)
            sent1 += out
        }
        sent1.forEach(observe)
        sent1 = tamper(1, sent1)
        var round2: [DKLsDKG.Round2State] = [], sent2: [ProtocolMessage] = []
        for (i, state) in round1.enumerated() {
            let (next, out) = try state.round2(inbox(of: PartyIndex(i), sent1), using: &rng)
            round2.append(next)
            sent2 += out
        }
        sent2.forEach(observe)
        sent2 = tamper(2, sent2)
        var round3: [DKLsDKG.Round3State] = [], sent3: [ProtocolMessage] = []
        for (i, state) in round2.enumerated() {
            let (next, out) = try state.round3(inbox(of: PartyIndex(i), sent2), using: &rng)
            round3.append(next)
            sent3 += out
        }
        sent3.forEach(observe)
        sent3 = tamper(3, sent3)
        var keyshares: [DKLsKeyshare] = []
        for (i, state) in round3.enumerated() { keyshares.append(try state.finish(inbox(of: PartyIndex(i), sent3))) }
        return keyshares
    }

    /// Rounds 1–2 among `keyshares` (the signers, one keyshare each, ascending party index).
    public static func presign<R: RandomNumberGenerator>(
        _ keyshares: [DKLsKeyshare], path: DerivationPath = .root, using rng: inout R,
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> [DKLsPresignature] {
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        let signers = keyshares.map(\.partyIndex)
        var round1: [DKLsSign.Round1State] = [], sent1: [ProtocolMessage] = []
        for keyshare in keyshares {
            let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instance,
                                                     setupHash: setup, path: path)
            let (state, out) = try DKLsSign.start(parameters, using: &rng)
            round1.append(state)
            sent1 += out
        }
        sent1.forEach(observe)
        sent1 = tamper(1, sent1)
        var round2: [DKLsSign.Round2State] = [], sent2: [ProtocolMessage] = []
        for (position, state) in round1.enumerated() {
            let (next, out) = try state.round2(inbox(of: signers[position], sent1), using: &rng)
            round2.append(next)
            sent2 += out
        }
        sent2.forEach(observe)
        sent2 = tamper(2, sent2)
        var presignatures: [DKLsPresignature] = []
        for (position, state) in round2.enumerated() {
            presignatures.append(try state.presignature(inbox(of: signers[position], sent2)))
        }
        return presignatures
    }

    /// The finish round and the combination at every signer; all must produce the same signature.
    public static func finish(
        _ presignatures: [DKLsPresignature], keyshares: [DKLsKeyshare], messageHash: [UInt8],
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> Secp256k1.ECDSASignature {
        var states: [DKLsSign.FinishState] = [], sent: [ProtocolMessage] = []
        for (position, presignature) in presignatures.enumerated() {
            let (state, message) = try presignature.finish(messageHash: messageHash, keyshare: keyshares[position])
            states.append(state)
            sent.append(message)
        }
        sent.forEach(observe)
        sent = tamper(3, sent)
        var signatures: [Secp256k1.ECDSASignature] = []
        for (position, state) in states.enumerated() {
            signatures.append(try state.combine(inbox(of: keyshares[position].partyIndex, sent)))
        }
        guard let first = signatures.first, signatures.allSatisfy({ $0 == first }) else {
            throw .signingFailed(party: nil, reason: .invalidSignature)
        }
        return first
    }

    /// A whole signature: presign then finish.
    public static func sign<R: RandomNumberGenerator>(
        _ keyshares: [DKLsKeyshare], messageHash: [UInt8], path: DerivationPath = .root, using rng: inout R,
        tamper: Tamper = { $1 }, observe: Observe = { _ in }
    ) throws(ProtocolError) -> Secp256k1.ECDSASignature {
        let presignatures = try presign(keyshares, path: path, using: &rng, tamper: tamper, observe: observe)
        return try finish(presignatures, keyshares: keyshares, messageHash: messageHash, tamper: tamper, observe: observe)
    }
}
