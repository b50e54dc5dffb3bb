import MPCProtocols

/// Session mode (SETUP 0x01): the keyshare's mode, whose raw values are SETUP's codes.
package typealias SessionMode = Keyshare.Mode

extension Keyshare.Mode {
    /// (n, t): duo (2, 2), trio (3, 2).
    package var threshold: (n: UInt8, t: UInt8) { self == .duo ? (2, 2) : (3, 2) }
    /// Every party of the mode: {0, 1} or {0, 1, 2}.
    package var allParties: PartySet {
        PartySet(uncheckedSorted: self == .duo ? [0, 1] : [0, 1, 2])
    }
}
