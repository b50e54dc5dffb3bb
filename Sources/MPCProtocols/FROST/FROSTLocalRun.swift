import MPCCrypto

extension FROST {
    /// Runs every party of a protocol in one process (tests, the interop oracle, benchmarks and
    /// the CLI self-check). Not for production: the real parties live on different devices.
    @_spi(InProcess)
    public enum LocalRun {
        /// A full DKG among n parties (keygen, refresh or import); returns the keyshares by index.
        public static func keyGeneration(threshold: UInt8, parties: UInt8, sessionId: [UInt8],
                                         mode: (PartyIndex) -> KeygenMode,
                                         using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [Keyshare] {
            var round1: [KeyGeneration.Round1State] = []
            var broadcasts: [ProtocolMessage] = []
            for i in 0..<parties {
                let (state, out) = try KeyGeneration.start(party: i, threshold: threshold, parties: parties,
                                                           sessionId: sessionId, mode: mode(i), using: &rng)
                round1.append(state)
                broadcasts += out
            }
            var round2: [KeyGeneration.Round2State] = []
            var direct: [ProtocolMessage] = []
            for state in round1 {
                let (next, out) = try state.round2(broadcasts.filter { $0.from != state.party })
                round2.append(next)
                direct += out
            }
            var out: [Keyshare] = []
            for state in round2 { out.append(try state.finish(direct.filter { $0.to == state.party })) }
            return out
        }

        /// A fresh t-of-n key.
        public static func keygen(threshold: UInt8, parties: UInt8,
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [Keyshare] {
            let sessionId = FROST.randomBytes(32, using: &rng)
            return try keyGeneration(threshold: threshold, parties: parties, sessionId: sessionId,
                                     mode: { _ in .keygen }, using: &rng)
        }

        /// Signs `message` with the keyshares of `signers` (indexes into `keyshares`) along `path`.
        public static func sign(_ keyshares: [Keyshare], signers: [PartyIndex], message: [UInt8], path: [UInt32] = [],
                                using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [UInt8] {
            guard !signers.isEmpty, signers.allSatisfy({ Int($0) < keyshares.count }) else {
                throw .invalidInput(.invalidParameters)
            }
            var sessions: [SigningSession] = []
            for k in signers {
                let presignature = Presignature(keyshare: keyshares[Int(k)], using: &rng)
                sessions.append(try SigningSession(keyshare: keyshares[Int(k)], signers: signers, message: message,
                                                   path: path, presignature: presignature))
            }
            for (a, i) in signers.enumerated() {
                for b in sessions.indices where b != a { try sessions[b].receiveRound1(sessions[a].round1Message, from: i) }
            }
            var round2: [[UInt8]] = []
            for b in sessions.indices { round2.append(try sessions[b].round2()) }
            for (a, i) in signers.enumerated() {
                for b in sessions.indices where b != a { try sessions[b].receiveRound2(round2[a], from: i) }
            }
            guard let first = sessions.first else { throw .invalidInput(.invalidParameters) }
            return try first.signature()
        }
    }
}
