import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// A round state that holds secrets runs its round once: re-running signing round 2 would repeat the
/// RVOLE with the same OT outputs and a new mask (two equations in r_i, sk_i), and re-running the
/// presignature step would mint two presignatures with one nonce. Both leak the key.
@Suite("DKLs23 round states are single use", .heavy)
struct DKLsSingleRunTests {
    @Test func signingRoundsRunOnce() throws {
        var rng = DeterministicRandom(seed: 900)
        let keyshares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        var states: [DKLsSign.Round1State] = [], sent: [ProtocolMessage] = []
        for keyshare in keyshares {
            let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: [0, 1], instanceId: instance, setupHash: setup)
            let (state, out) = try DKLsSign.start(parameters, using: &rng)
            states.append(state)
            sent += out
        }
        // An incomplete inbox does not consume the state.
        #expect(throws: ProtocolError.abort(party: 1, reason: .missingMessages)) { try states[0].round2([], using: &rng) }
        let inbox0 = DKLsInProcess.inbox(of: 0, sent)
        let (round2, out0) = try states[0].round2(inbox0, using: &rng)
        let copy = states[0]
        #expect(throws: ProtocolError.invalidInput(.stateAlreadyConsumed)) { try copy.round2(inbox0, using: &rng) }
        let (round2B, out1) = try states[1].round2(DKLsInProcess.inbox(of: 1, sent), using: &rng)
        _ = round2B
        let presignature = try round2.presignature(DKLsInProcess.inbox(of: 0, out0 + out1))
        #expect(throws: ProtocolError.invalidInput(.stateAlreadyConsumed)) {
            try round2.presignature(DKLsInProcess.inbox(of: 0, out0 + out1))
        }
        #expect(!presignature.isConsumed)
    }

    @Test func dkgRoundsRunOnce() throws {
        var rng = DeterministicRandom(seed: 901)
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        var states: [DKLsDKG.Round1State] = [], sent: [ProtocolMessage] = []
        for i in 0..<2 {
            let parameters = try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: PartyIndex(i),
                                                    instanceId: instance, setupHash: setup)
            let (state, out) = try DKLsDKG.start(parameters, using: &rng)
            states.append(state)
            sent += out
        }
        let inbox = DKLsInProcess.inbox(of: 0, sent)
        let (round2, out0) = try states[0].round2(inbox, using: &rng)
        #expect(throws: ProtocolError.invalidInput(.stateAlreadyConsumed)) { try states[0].round2(inbox, using: &rng) }
        let (_, out1) = try states[1].round2(DKLsInProcess.inbox(of: 1, sent), using: &rng)
        _ = try round2.round3(DKLsInProcess.inbox(of: 0, out0 + out1), using: &rng)
        #expect(throws: ProtocolError.invalidInput(.stateAlreadyConsumed)) {
            try round2.round3(DKLsInProcess.inbox(of: 0, out0 + out1), using: &rng)
        }
    }
}

@Suite("DKLs23 presignature storage form", .heavy)
struct DKLsPresignatureCodecTests {
    @Test func roundTripsAndFinishesLikeTheOriginal() throws {
        var rng = DeterministicRandom(seed: 910)
        let keyshares = try DKLsInProcess.keygen(partyCount: 3, threshold: 2, using: &rng)
        let signers = [keyshares[0], keyshares[2]]
        let path = try DerivationPath("m/1/2")
        let presignatures = try DKLsInProcess.presign(signers, path: path, using: &rng)
        let bytes = try presignatures.map { try $0.serialized() }
        #expect(bytes.map(\.count) == [262 + 2 + 4 * 2, 262 + 2 + 4 * 2])   // dkls23.md §13.4: 262 + #S + 4·depth
        let restored = try bytes.map { try DKLsPresignature.deserialize($0) }
        #expect(try restored.map { try $0.serialized() } == bytes)
        let hash = SHA256.hash(Array("stored".utf8))
        let signature = try DKLsInProcess.finish(restored, keyshares: signers, messageHash: hash)
        let child = try path.derive(publicKey: keyshares[0].publicKey, chainCode: keyshares[0].rootChainCode)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: child.publicKey))
        // A consumed presignature has no stored form; corrupt bytes are refused.
        #expect(throws: ProtocolError.invalidInput(.presignatureAlreadyUsed)) { try restored[0].serialized() }
        for corrupt in [Array(bytes[0].dropLast()), bytes[0] + [0], [2] + bytes[0].dropFirst()] {
            #expect(throws: ProtocolError.invalidInput(.presignatureMismatch)) { try DKLsPresignature.deserialize(corrupt) }
        }
        var outOfRange = bytes[0]
        outOfRange.replaceSubrange((outOfRange.count - 32)..<outOfRange.count, with: [UInt8](repeating: 0xFF, count: 32))
        #expect(throws: ProtocolError.invalidInput(.presignatureMismatch)) { try DKLsPresignature.deserialize(outOfRange) }
        #expect(!"\(restored[1])".contains(Hex.encode(bytes[1].suffix(32))))
    }
}
