import MPCCrypto

extension FROST.KeyGeneration {
    /// Starts this party's DKG (keygen, refresh, import) as round states, like DKLs23's `DKLsDKG.start`:
    /// each round is a distinct type whose one function takes every peer's messages of that round and
    /// returns the next state with this party's next messages, so a round cannot run twice or out of
    /// order. Returns the round-1 state and the round-1 broadcast (tag 0x0101). Bad parameters are
    /// `invalidInput(.invalidParameters)` (as ``init(party:threshold:parties:sessionId:mode:using:)``).
    public static func start(party: PartyIndex, threshold: UInt8, parties: UInt8, sessionId: [UInt8], mode: FROST.KeygenMode,
                             using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> (Round1State, [ProtocolMessage]) {
        let machine = try FROST.KeyGeneration(party: party, threshold: threshold, parties: parties, sessionId: sessionId,
                                              mode: mode, using: &rng)
        let state = Round1State(machine: machine)
        return (state, [state.broadcast])
    }

    /// The payloads of `messages` with `tag`, by ascending sender.
    static func payloads(_ messages: [ProtocolMessage], tag: FROST.MessageTag) -> [(PartyIndex, [UInt8])] {
        messages.filter { $0.tag == tag.rawValue }.sorted { $0.from < $1.from }.map { ($0.from, $0.payload) }
    }

    /// A party after its round-1 broadcast went out: waits for every peer's.
    public struct Round1State: Sendable, CustomStringConvertible {
        let machine: FROST.KeyGeneration

        /// This party's index.
        public var party: PartyIndex { machine.party }

        /// This party's round-1 broadcast (tag 0x0101).
        public var broadcast: ProtocolMessage {
            ProtocolMessage(tag: FROST.MessageTag.dkgRound1.rawValue, from: machine.party, to: nil, payload: machine.round1Message)
        }

        /// Round 2: takes every peer's round-1 broadcast (tag 0x0101; checked in ascending sender order,
        /// a bad one is `abort(sender, …)`) and returns the round-2 state with this party's round-2 P2P
        /// messages (tag 0x0202, one per peer by ascending recipient; secret: the session layer encrypts
        /// them). A missing broadcast is `abort(nil, .missingMessages)`.
        public func round2(_ messages: [ProtocolMessage]) throws(ProtocolError) -> (Round2State, [ProtocolMessage]) {
            var machine = self.machine
            for (from, payload) in FROST.KeyGeneration.payloads(messages, tag: .dkgRound1) {
                try machine.receiveRound1(payload, from: from)
            }
            let direct = try machine.round2Messages()
            let out = direct.sorted { $0.key < $1.key }.map {
                ProtocolMessage(tag: FROST.MessageTag.dkgRound2.rawValue, from: machine.party, to: $0.key, payload: $0.value)
            }
            return (Round2State(machine: machine), out)
        }

        public var description: String { "FROST.KeyGeneration.Round1State(party: \(machine.party), secrets redacted)" }
    }

    /// A party after its round-2 shares went out: waits for every peer's.
    public struct Round2State: Sendable, CustomStringConvertible {
        let machine: FROST.KeyGeneration

        /// This party's index.
        public var party: PartyIndex { machine.party }

        /// Takes every peer's round-2 message (tag 0x0202; checked in ascending sender order: echo,
        /// Feldman check, chain-code opening) and returns the new keyshare.
        public func finish(_ messages: [ProtocolMessage]) throws(ProtocolError) -> FROST.Keyshare {
            var machine = self.machine
            for (from, payload) in FROST.KeyGeneration.payloads(messages, tag: .dkgRound2) {
                try machine.receiveRound2(payload, from: from)
            }
            return try machine.finish()
        }

        public var description: String { "FROST.KeyGeneration.Round2State(party: \(machine.party), secrets redacted)" }
    }
}
