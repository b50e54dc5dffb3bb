import MPCCrypto
@_spi(InProcess) @testable import MPCProtocols

/// Test conveniences over `DKLsInProcess`: seeded runs and test-only reconstruction.
enum DKLsHarness {
    static func inbox(of party: PartyIndex, _ sent: [ProtocolMessage]) -> [ProtocolMessage] {
        DKLsInProcess.inbox(of: party, sent)
    }

    static func parameters(n: Int, t: Int, instance: [UInt8]) throws -> [DKLsDKG.Parameters] {
        try (0..<n).map { i in
            try DKLsDKG.Parameters(partyCount: n, threshold: t, partyIndex: PartyIndex(i), instanceId: instance,
                                   setupHash: [UInt8](repeating: 0x5E, count: 32))
        }
    }

    /// A full keygen; `tamper` may rewrite the messages of any round before delivery.
    static func keygen(n: Int, t: Int, seed: UInt64,
                       tamper: @escaping DKLsInProcess.Tamper = { $1 }) throws -> [DKLsKeyshare] {
        var rng = DeterministicRandom(seed: seed)
        return try DKLsInProcess.keygen(partyCount: n, threshold: t, using: &rng, tamper: tamper)
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
