extension FROST {
    /// The session-layer protocol tags of FROST messages (docs/protocol/frost.md §13, refining
    /// `docs/protocol/session.md` §3.7 without reusing a tag). The delivery is fixed per tag.
    public enum MessageTag: UInt16, Sendable, CaseIterable {
        /// DKG round 1 (keygen, refresh, import): commitments [‖ proof ‖ chain-code commitment]. BCAST.
        case dkgRound1 = 0x0101
        /// DKG round 2: echo ‖ share [‖ chain-code contribution]. P2P (secret).
        case dkgRound2 = 0x0202
        /// Signing round 1 (the presignature's commitments D ‖ E). BCAST.
        case signRound1 = 0x1101
        /// Signing round 2: transcript ‖ signature share. BCAST or inside FINAL.
        case signRound2 = 0x1301
        /// Export: a secret share to the receiver. P2P (secret).
        case exportShare = 0x3102
        /// Repair step 1: δ between helpers. P2P (secret).
        case repairStep1 = 0x4102
        /// Repair step 2: σ to the lost party. P2P (secret).
        case repairStep2 = 0x4202

        /// Whether the message is point-to-point (encrypted by the session layer) rather than broadcast.
        public var isPointToPoint: Bool {
            switch self {
            case .dkgRound2, .exportShare, .repairStep1, .repairStep2: return true
            case .dkgRound1, .signRound1, .signRound2: return false
            }
        }
    }
}
