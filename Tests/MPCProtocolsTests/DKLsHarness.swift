import MPCCrypto
@testable import MPCProtocols

/// Runs protocols among several in-process parties, delivering every message to its receivers.
enum DKLsHarness {
    /// The messages `party` receives out of everything sent in a round.
    static func inbox(of party: PartyIndex, _ sent: [ProtocolMessage]) -> [ProtocolMessage] {
        sent.filter { $0.from != party && ($0.to == nil || $0.to == party) }
    }

    static func parameters(n: Int, t: Int, instance: [UInt8]) throws -> [DKLsDKG.Parameters] {
        try (0..<n).map { i in
            try DKLsDKG.Parameters(partyCount: n, threshold: t, partyIndex: PartyIndex(i), instanceId: instance,
                                   setupHash: [UInt8](repeating: 0x5E, count: 32))
        }
    }

    /// A full keygen; `tamper` may rewrite the messages of any round before delivery.
    static func keygen(n: Int, t: Int, seed: UInt64,
                       tamper: (Int, [ProtocolMessage]) -> [ProtocolMessage] = { $1 }) throws -> [DKLsKeyshare] {
        var rng = DeterministicRandom(seed: seed)
        let instance = rng.randomBytes(count: 32)
        var round1: [DKLsDKG.Round1State] = [], sent1: [ProtocolMessage] = []
        for p in try parameters(n: n, t: t, instance: instance) {
            let (state, out) = try DKLsDKG.start(p, using: &rng)
            round1.append(state)
            sent1 += out
        }
        sent1 = tamper(1, sent1)
        var round2: [DKLsDKG.Round2State] = [], sent2: [ProtocolMessage] = []
        for (i, state) in round1.enumerated() {
            let (next, out) = try state.round2(inbox(of: PartyIndex(i), sent1), using: &rng)
            round2.append(next)
            sent2 += out
        }
        sent2 = tamper(2, sent2)
        var round3: [DKLsDKG.Round3State] = [], sent3: [ProtocolMessage] = []
        for (i, state) in round2.enumerated() {
            let (next, out) = try state.round3(inbox(of: PartyIndex(i), sent2), using: &rng)
            round3.append(next)
            sent3 += out
        }
        sent3 = tamper(3, sent3)
        return try round3.enumerated().map { i, state in try state.finish(inbox(of: PartyIndex(i), sent3)) }
    }

    /// Test-only: interpolates the secret from t shares (never done in production code).
    static func reconstruct(_ keyshares: [DKLsKeyshare]) throws -> Secp256k1.Scalar {
        let set = keyshares.map(\.partyIndex)
        var secret = Secp256k1.Scalar.zero
        for keyshare in keyshares {
            secret += try Lagrange.coefficient(of: keyshare.partyIndex, in: set, points: keyshare.evaluationPoints) * keyshare.share
        }
        return secret
    }
}
