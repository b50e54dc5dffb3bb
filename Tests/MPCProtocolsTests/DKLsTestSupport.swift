import MPCCrypto
@testable import MPCProtocols

func hex(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }

// `==` on secret OT setups exists for tests only (issue 33): the library's types are not `Equatable`, so
// no production path can compare secrets with a variable-time `==`.
extension SoftSpokenOT.ReceiverSetup: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.roots == b.roots }
}

extension SoftSpokenOT.SenderSetup: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.delta == b.delta && a.coPath == b.coPath }
}

extension DKLsKeyshare.PairwiseSetup: Equatable {
    public static func == (a: Self, b: Self) -> Bool { a.zeroSeed == b.zeroSeed && a.receiver == b.receiver && a.sender == b.sender }
}

/// A random pair of SoftSpokenOT setups as the base OTs and the GGM layer would leave them: Bob holds
/// fresh GGM roots and both base-OT keys per row, Alice Δ, the keys Δ selects and her punctured trees
/// decoded from Bob's corrections (the same code path as the DKG). `tamperCorrections` (tests of a
/// malicious Bob) rewrites the corrections before Alice decodes them.
func randomOTSetups(using rng: inout DeterministicRandom, delta fixedDelta: [UInt8]? = nil,
                    tamperCorrections: ([UInt8]) -> [UInt8] = { $0 }) throws -> (SoftSpokenOT.ReceiverSetup, SoftSpokenOT.SenderSetup) {
    let zero = (0..<256).map { _ in rng.randomBytes(count: 32) }
    let one = (0..<256).map { _ in rng.randomBytes(count: 32) }
    let drawn = rng.randomBytes(count: 32)
    let delta = fixedDelta ?? drawn
    let chosen = (0..<256).map { Bits.bit(delta, $0) == 1 ? one[$0] : zero[$0] }
    let receiver = SoftSpokenOT.ReceiverSetup.random(using: &rng)
    let corrections = tamperCorrections(receiver.corrections(zeroKeys: zero, oneKeys: one))
    let sender = try SoftSpokenOT.SenderSetup(delta: delta, corrections: corrections, chosenKeys: chosen, from: 1)
    return (receiver, sender)
}
