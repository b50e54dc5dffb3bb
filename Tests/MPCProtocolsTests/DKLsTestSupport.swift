import MPCCrypto
@testable import MPCProtocols

func hex(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }

/// A random pair of SoftSpokenOT setups as the base OTs and the GGM layer would leave them: Bob holds
/// fresh GGM roots and both base-OT keys per row, Alice Δ, the keys Δ selects and her punctured trees
/// decoded from Bob's corrections (the same code path as the DKG). `tamperCorrections` (tests of a
/// malicious Bob) rewrites the corrections before Alice decodes them.
func randomOTSetups(using rng: inout DeterministicRandom,
                    tamperCorrections: ([UInt8]) -> [UInt8] = { $0 }) throws -> (SoftSpokenOT.ReceiverSetup, SoftSpokenOT.SenderSetup) {
    let zero = (0..<256).map { _ in rng.randomBytes(count: 32) }
    let one = (0..<256).map { _ in rng.randomBytes(count: 32) }
    let delta = rng.randomBytes(count: 32)
    let chosen = (0..<256).map { Bits.bit(delta, $0) == 1 ? one[$0] : zero[$0] }
    let receiver = SoftSpokenOT.ReceiverSetup.random(using: &rng)
    let corrections = tamperCorrections(receiver.corrections(zeroKeys: zero, oneKeys: one))
    let sender = try SoftSpokenOT.SenderSetup(delta: delta, corrections: corrections, chosenKeys: chosen, from: 1)
    return (receiver, sender)
}
