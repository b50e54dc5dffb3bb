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
        // The pairwise setups are all-but-one correlated (dkls23.md §8.1): Alice holds every GGM leaf of
        // Bob's except leaf Δ_i of tree i.
        for keyshare in keyshares {
            for peer in keyshare.peers {
                let mine = try #require(keyshare.pairwise[peer])
                let theirs = try #require(keyshares[Int(peer)].pairwise[keyshare.partyIndex])
                #expect(mine.zeroSeed == theirs.zeroSeed)
                for i in [0, 1, 37, 63] {
                    let punctured = (0..<4).reduce(0) { $0 | Int(Bits.bit(theirs.sender.delta, 4 * i + $1)) << $1 }
                    for x in 0..<16 {
                        #expect((theirs.sender.leaves[i][x] == mine.receiver.leaves[i][x]) == (x != punctured))
                    }
                }
            }
        }
    }

    @Test func keyshareSerializationRoundTripsAndRejectsCorruption() throws {
        let keyshares = try DKLsHarness.keygen(n: 3, t: 2, seed: 99)
        for keyshare in keyshares {
            let bytes = keyshare.serialized()
            #expect(bytes.count == 21_132)   // dkls23.md §11: trio keyshare size
            let decoded = try DKLsKeyshare(serialized: bytes)
            #expect(decoded.serialized() == bytes)
            #expect(decoded.publicKey == keyshare.publicKey)
        }
        let bytes = keyshares[0].serialized()
        var wrongShare = bytes
        wrongShare[200] ^= 1   // inside s_i: s_i·G ≠ S_i
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try DKLsKeyshare(serialized: wrongShare) }
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try DKLsKeyshare(serialized: Array(bytes.dropLast())) }
        // Protocol v1 (KOS) keyshares and unknown versions are refused with their own error.
        #expect(bytes[0] == 2)
        for version: UInt8 in [1, 3] {
            var wrongVersion = bytes
            wrongVersion[0] = version
            #expect(throws: ProtocolError.invalidInput(.unsupportedKeyshareVersion)) { try DKLsKeyshare(serialized: wrongVersion) }
        }
        let oldFormat = [UInt8(1), 3, 2, 0] + [UInt8](repeating: 0, count: 49_800)   // a v1 trio keyshare's size
        #expect(throws: ProtocolError.invalidInput(.unsupportedKeyshareVersion)) { try DKLsKeyshare(serialized: oldFormat) }
        // The decoded setups (GGM leaves re-expanded from the stored roots and co-paths) equal the originals.
        let decoded = try DKLsKeyshare(serialized: bytes)
        #expect(decoded.pairwise == keyshares[0].pairwise)
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
        #expect(DKLsDKG.round2DirectSize == 18_625)   // fsid ‖ f(x_j) ‖ g(x_j) ‖ σ ‖ enc(z) (161) ‖ GGM corrections (16,384) ‖ PPRF proof (2,080)
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

    /// Issue 33: Bob (party 1) corrupts his GGM corrections toward Alice (party 0) in round 2 (both branches
    /// of one level of tree 32, so Alice uses one of them whatever Δ is): v2 noticed only at the first
    /// signature (AbortAndBan, after the address may be funded); v3's PPRF proof ends keygen with Abort(1).
    @Test func issue33_badGGMCorrectionEndsKeygenWithAbortOfBob() throws {
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidProof)) {
            _ = try DKLsHarness.keygen(n: 2, t: 2, seed: 12) { round, messages in
                guard round == 2 else { return messages }
                return messages.map { m in
                    guard m.from == 1, m.to == 0 else { return m }
                    var payload = m.payload
                    payload[128 + 8_448] ^= 1        // e_3^0 of tree 32 (corrections start at 161)
                    payload[128 + 8_448 + 32] ^= 1   // e_3^1 of tree 32
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
    }

    /// A short round-2 direct message (corrections cut) is Abort(sender) before the state is consumed:
    /// the same state then finishes with the real messages.
    @Test func shortCorrectionIsAbortWithoutStateChange() throws {
        var rng = DeterministicRandom(seed: 14)
        let parameters = try DKLsHarness.parameters(n: 2, t: 2, instance: rng.randomBytes(count: 32))
        let starts = try parameters.map { p throws in try DKLsDKG.start(p, using: &rng) }
        let sent1 = starts.flatMap(\.1)
        let seconds = try starts.map { s throws in try s.0.round2(DKLsHarness.inbox(of: s.0.parameters.partyIndex, sent1), using: &rng) }
        let sent2 = seconds.flatMap(\.1)
        let inbox0 = DKLsHarness.inbox(of: 0, sent2)
        let short = inbox0.map { m in
            m.from == 1 && !m.isBroadcast ? ProtocolMessage(tag: m.tag, from: 1, to: 0, payload: Array(m.payload.dropLast(32))) : m
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            _ = try seconds[0].0.round3(short, using: &rng)
        }
        _ = try seconds[0].0.round3(inbox0, using: &rng)
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
