import MPCCrypto
@testable import MPCProtocols

func hex(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }

/// A random pair of KOS setups as the base OTs would leave them: Bob holds both seeds per row, Alice Δ
/// and the seeds Δ selects.
func randomKOSSetups(using rng: inout DeterministicRandom) -> (KOS.ReceiverSetup, KOS.SenderSetup) {
    let zero = (0..<256).map { _ in rng.randomBytes(count: 32) }
    let one = (0..<256).map { _ in rng.randomBytes(count: 32) }
    let delta = rng.randomBytes(count: 32)
    let chosen = (0..<256).map { Bits.bit(delta, $0) == 1 ? one[$0] : zero[$0] }
    return (KOS.ReceiverSetup(zeroSeeds: zero, oneSeeds: one), KOS.SenderSetup(delta: delta, chosenSeeds: chosen))
}
