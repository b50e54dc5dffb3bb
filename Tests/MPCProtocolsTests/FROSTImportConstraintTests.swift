import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// The Feldman check against the implied constant is the only thing that forces an importer's
/// polynomial to have constant x (and a refresher's to have constant 0): a share from a polynomial
/// with another constant, with a correct context and echo, must be refused and blame its sender.
@Suite("FROST import constants are enforced", .heavy)
struct FROSTImportConstraintTests {
    @Test func importerWithAnotherConstantIsCaught() throws {
        var rng = DeterministicRandom(seed: 6)
        let sessionId = FROST.randomBytes(32, using: &rng)
        let x = Ed25519.Scalar.random(using: &rng)
        let announced = try FROST.ImportedKey(importer: 1, publicKey: Ed25519.Point(base: x),
                                              chainCode: [UInt8](repeating: 1, count: 32))
        var receiver = try FROST.KeyGeneration(party: 0, threshold: 2, parties: 2, sessionId: sessionId,
                                               mode: .importKey(announced), using: &rng)
        let a1 = Ed25519.Scalar.random(using: &rng)
        let round1 = Ed25519.Point(base: a1).bytes
        try receiver.receiveRound1(round1, from: 1)
        let echo = FROST.domain.hash("dkg/echo", fields: [receiver.context, receiver.round1Message, round1])
        let point = FROST.Identifier(party: 0).scalar
        let cheating = FROST.evaluate([x + .one, a1], at: point)
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidShare)) {
            try receiver.receiveRound2(echo + cheating.bytes, from: 1)
        }
        // The state did not advance: the honest share is still accepted.
        let honest = FROST.evaluate([x, a1], at: point)
        try receiver.receiveRound2(echo + honest.bytes, from: 1)
        _ = try receiver.finish()
    }
}
