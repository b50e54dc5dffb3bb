/// The session layer's protocol tags for DKLs23 messages (`docs/protocol/session.md` §3.7).
public enum DKLsTag {
    public static let dkgRound1Broadcast: UInt16 = 0x0101
    public static let dkgRound1Direct: UInt16 = 0x0102
    public static let dkgRound2Broadcast: UInt16 = 0x0201
    public static let dkgRound2Direct: UInt16 = 0x0202
    public static let dkgRound3Broadcast: UInt16 = 0x0301
    public static let signRound1Broadcast: UInt16 = 0x1101
    public static let signRound1Direct: UInt16 = 0x1102
    public static let signRound2Direct: UInt16 = 0x1202
    public static let signFinish: UInt16 = 0x1301
    public static let hardDerivation: UInt16 = 0x2101
    public static let exportShare: UInt16 = 0x3102

    /// Every tag a DKLs23 message may carry; anything else from a peer is unexpected.
    static let all: Set<UInt16> = [dkgRound1Broadcast, dkgRound1Direct, dkgRound2Broadcast, dkgRound2Direct,
                                   dkgRound3Broadcast, signRound1Broadcast, signRound1Direct, signRound2Direct,
                                   signFinish, hardDerivation, exportShare]
}
