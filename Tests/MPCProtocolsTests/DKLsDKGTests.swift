import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

@Suite("DKLs23 DKG (keygen)", .heavy)
struct DKLsDKGTests {
    @Test(arguments: [(2, 2), (3, 2), (5, 3)])
    func keygenAgreesAndInterpolates(n: Int, t: Int) throws {
        let keyshares = try DKLsHarness.keygen(n: n, t: t, seed: UInt64(10 * n + t))
        let first = keyshares[0]
        for keyshare in keyshares {
            #expect(keyshare.publicKey == first.publicKey)
            #expect(keyshare.keyId == first.keyId)
            #expect(keyshare.generation == first.generation)
            #expect(keyshare.rootChainCode == first.rootChainCode)
            #expect(keyshare.vrfPublicKey == first.vrfPublicKey)
            #expect(keyshare.evaluationPoints.map(\.bytes) == first.evaluationPoints.map(\.bytes))
            try keyshare.validate()
        }
        #expect(first.keyId == DKLsHash.h("key-id", try first.publicKey.compressed()))
        // Any t shares interpolate to the same secret behind P (test-only reconstruction).
        let secret = try DKLsHarness.reconstruct(Array(keyshares.prefix(t)))
        #expect(Secp256k1.Point(base: secret) == first.publicKey)
        #expect(try DKLsHarness.reconstruct(Array(keyshares.suffix(t))) == secret)
        // The pairwise setups are base-OT correlated: Alice's seeds are Bob's, selected by Δ.
        for keyshare in keyshares {
            for peer in keyshare.peers {
                let mine = try #require(keyshare.pairwise[peer])
                let theirs = try #require(keyshares[Int(peer)].pairwise[keyshare.partyIndex])
                #expect(mine.zeroSeed == theirs.zeroSeed)
                for b in [0, 1, 100, 255] {
                    let expected = Bits.bit(theirs.sender.delta, b) == 1 ? mine.receiver.oneSeeds[b] : mine.receiver.zeroSeeds[b]
                    #expect(theirs.sender.chosenSeeds[b] == expected)
                }
            }
        }
    }

    @Test func keyshareSerializationRoundTripsAndRejectsCorruption() throws {
        let keyshares = try DKLsHarness.keygen(n: 3, t: 2, seed: 99)
        for keyshare in keyshares {
            let bytes = keyshare.serialized()
            #expect(bytes.count == 49_804)   // spec §11: trio keyshare size
            let decoded = try DKLsKeyshare(serialized: bytes)
            #expect(decoded.serialized() == bytes)
            #expect(decoded.publicKey == keyshare.publicKey)
        }
        let bytes = keyshares[0].serialized()
        var wrongShare = bytes
        wrongShare[200] ^= 1   // inside s_i: s_i·G ≠ S_i
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try DKLsKeyshare(serialized: wrongShare) }
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try DKLsKeyshare(serialized: Array(bytes.dropLast())) }
        var wrongVersion = bytes
        wrongVersion[0] = 2
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try DKLsKeyshare(serialized: wrongVersion) }
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try DKLsKeyshare(serialized: []) }
        #expect(!"\(keyshares[0])".contains(Hex.encode(keyshares[0].share.bytes)))
    }

    @Test func messageSizesMatchTheSpec() throws {
        var rng = DeterministicRandom(seed: 5)
        let parameters = try DKLsHarness.parameters(n: 3, t: 2, instance: rng.randomBytes(count: 32))
        let (_, out) = try DKLsDKG.start(parameters[0], using: &rng)
        #expect(out.filter(\.isBroadcast).map(\.payload.count) == [64])
        #expect(out.filter { !$0.isBroadcast }.map(\.payload.count) == [16_928, 16_928])
        #expect(DKLsDKG.round2BroadcastSize(threshold: 2, mode: .keygen) == 324)
        #expect(DKLsDKG.round2BroadcastSize(threshold: 3, mode: .keygen) == 390)
        #expect(DKLsDKG.round2DirectSize == 161)   // fsid ‖ f(x_j) ‖ g(x_j) ‖ σ ‖ enc(z)
        #expect(DKLsDKG.round3BroadcastSize == 160)
    }

    @Test func tamperingIsDetectedAndBlamed() throws {
        // A bad Feldman share from party 1 to party 0.
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidShare)) {
            _ = try DKLsHarness.keygen(n: 3, t: 2, seed: 1) { round, messages in
                guard round == 2 else { return messages }
                return messages.map { m in
                    guard m.from == 1, m.to == 0 else { return m }
                    var payload = m.payload
                    payload[40] ^= 1   // inside f_1(x_0)
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
        // A changed opening (round-2 broadcast) breaks party 2's commitment.
        #expect(throws: ProtocolError.abort(party: 2, reason: .commitmentMismatch)) {
            _ = try DKLsHarness.keygen(n: 3, t: 2, seed: 2) { round, messages in
                guard round == 2 else { return messages }
                return messages.map { m in
                    guard m.from == 2, m.isBroadcast else { return m }
                    var payload = m.payload
                    payload[payload.count - 1] ^= 1   // the salt
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
        // A wrong proof of knowledge (the proofs are outside the commitment): Abort(2, invalidProof).
        #expect(throws: ProtocolError.abort(party: 2, reason: .invalidProof)) {
            _ = try DKLsHarness.keygen(n: 3, t: 2, seed: 8) { round, messages in
                guard round == 2 else { return messages }
                return messages.map { m in
                    guard m.from == 2, m.isBroadcast else { return m }
                    var payload = m.payload
                    payload[66 + 40] ^= 1   // inside π^x (after Atx = 2 × 33 bytes), in the response z
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
        // An invalid base-OT response (the batch's z is not a point): Abort(1, malformedMessage).
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 9) { round, messages in
                guard round == 2 else { return messages }
                return messages.map { m in
                    guard m.from == 1, !m.isBroadcast else { return m }
                    var payload = m.payload
                    payload[128] = 0x05   // prefix of z (dkls23.md §8: one sender point per batch)
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
        // A wrong transcript hash in round 3.
        #expect(throws: ProtocolError.abort(party: 1, reason: .transcriptMismatch)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 3) { round, messages in
                guard round == 3 else { return messages }
                return messages.map { m in
                    guard m.from == 1 else { return m }
                    var payload = m.payload
                    payload[0] ^= 1
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
        // A truncated base-OT message, a missing message, a duplicate, a stranger.
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 4) { round, messages in
                round == 1 ? messages.map { m in
                    m.from == 1 && !m.isBroadcast ? ProtocolMessage(tag: m.tag, from: 1, to: m.to, payload: Array(m.payload.dropLast())) : m
                } : messages
            }
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .missingMessages)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 5) { round, messages in
                round == 1 ? messages.filter { !($0.from == 1 && $0.isBroadcast) } : messages
            }
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .duplicateMessage)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 6) { round, messages in
                round == 3 ? messages + messages.filter { $0.from == 1 } : messages
            }
        }
        #expect(throws: ProtocolError.abort(party: 7, reason: .unexpectedSender)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 7) { round, messages in
                round == 3 ? messages + [ProtocolMessage(tag: DKLsTag.dkgRound3Broadcast, from: 7, to: nil, payload: [])] : messages
            }
        }
    }

    @Test func parametersAreValidated() {
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsDKG.Parameters(partyCount: 2, threshold: 3, partyIndex: 0, instanceId: [UInt8](repeating: 0, count: 32),
                                   setupHash: [UInt8](repeating: 0, count: 32))
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: 2, instanceId: [UInt8](repeating: 0, count: 32),
                                   setupHash: [UInt8](repeating: 0, count: 32))
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: 0, instanceId: [1], setupHash: [UInt8](repeating: 0, count: 32))
        }
    }
}
