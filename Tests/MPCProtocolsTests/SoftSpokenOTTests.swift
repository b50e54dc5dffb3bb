import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// SoftSpokenOT (dkls23.md §8.1, §9): the GGM all-but-one OT layer, the extension's correlation and
/// consistency check, malicious-Bob behaviour, and the known answers of dkls23.md Appendix A.
@Suite("DKLs23 SoftSpokenOT", .heavy)
struct SoftSpokenOTTests {
    static func key(_ label: String, _ fields: [UInt8]...) -> [UInt8] {
        DKLsHash.h("kat", Array(label.utf8) + fields.flatMap { $0 })
    }

    // MARK: GGM all-but-one OT

    @Test func ggmKnownAnswers() {
        let root = [UInt8](repeating: 1, count: 32)
        let levels = GGMTree.expand(root: root)
        #expect(levels[1][0] == hex("aeddf6c79abf55217876eac2eae61cc2c8e6ef86905f5e5d2052fcf803239c55"))
        #expect(levels[4][0] == hex("3d143789d5819183d7e2548a128033fc30aebc57e46b5306fa49618b2764b6d9"))
        #expect(levels[4][15] == hex("62fbfb1eefb0b010a318cd840ca5c4357be348edb6c41d41db029539d69a6db8"))
        let zeroKeys = (0..<4).map { Self.key("ggm-key", [UInt8($0)], [0]) }
        let oneKeys = (0..<4).map { Self.key("ggm-key", [UInt8($0)], [1]) }
        let correction = GGMTree.corrections(levels: levels, zeroKeys: zeroKeys[...], oneKeys: oneKeys[...])
        #expect(correction.count == 256)
        #expect(Array(correction[0..<32]) == hex("93a04601fe2d6182aa5b40dbb9c7e81d1127cd17f118da4d9dee41e70afb83fa"))
        #expect(Array(correction[224..<256]) == hex("d24068c286dcea37102327983f76bb1bed0bcbd4bf639cadd657fb79be3ad502"))
        #expect(SHA256.hash(correction) == hex("b5410866bb228fcc452326c493e1d8840e4143789b3dc9f86fa9a1893673fa97"))
    }

    @Test func nodeHasherEqualsThePlainDefinition() {
        var rng = DeterministicRandom(seed: 45)
        let hasher = GGMTree.NodeHasher()
        for _ in 0..<8 {
            let seed = rng.randomBytes(count: 32)
            for branch: UInt8 in [0, 1] { #expect(hasher.child(seed, branch: branch) == GGMTree.child(seed, branch: branch)) }
        }
    }

    /// Alice, whose base-OT choice bits are Δ_i, learns every leaf except leaf Δ_i: for every Δ_i.
    @Test func punctureRevealsEveryLeafButTheChosenOne() {
        var rng = DeterministicRandom(seed: 40)
        let root = rng.randomBytes(count: 32)
        let levels = GGMTree.expand(root: root)
        let zeroKeys = (0..<4).map { _ in rng.randomBytes(count: 32) }
        let oneKeys = (0..<4).map { _ in rng.randomBytes(count: 32) }
        let correction = GGMTree.corrections(levels: levels, zeroKeys: zeroKeys[...], oneKeys: oneKeys[...])
        for punctured in 0..<16 {
            let choices = (0..<4).map { UInt64((punctured >> $0) & 1) }
            let keys = (0..<4).map { choices[$0] == 1 ? oneKeys[$0] : zeroKeys[$0] }
            let coPath = GGMTree.coPath(choices: choices, correction: correction[...], keys: keys[...])
            let leaves = GGMTree.puncturedLeaves(choices: choices, coPath: coPath[...])
            for x in 0..<16 {
                if x == punctured {
                    #expect(leaves[x] != levels[4][x])
                } else {
                    #expect(leaves[x] == levels[4][x], "Δ_i = \(punctured), leaf \(x)")
                }
            }
        }
    }

    // MARK: The extension

    @Test func correlationHoldsForEveryColumn() throws {
        var rng = DeterministicRandom(seed: 41)
        let (bobSetup, aliceSetup) = try randomOTSetups(using: &rng)
        let prgId = rng.randomBytes(count: 32)
        let choices = rng.randomBytes(count: 64)
        let (t, message) = SoftSpokenOT.receive(setup: bobSetup, prgId: prgId, choices: choices, using: &rng)
        #expect(message.count == 9_232)
        let q = try SoftSpokenOT.send(setup: aliceSetup, prgId: prgId, message: message, from: 1)
        let delta = GF256(littleEndian: aliceSetup.delta)
        #expect(q.count == 512 && t.count == 512)
        for j in 0..<512 {
            #expect(q[j] == t[j] ^ delta.masked(by: Bits.bit(choices, j)))
        }
        // A flipped bit of x̃ is caught and classified as abort-and-ban; a short message is Abort(Bob).
        var tampered = message
        tampered[5_120] ^= 1
        #expect(throws: ProtocolError.abortAndBan(party: 1, reason: .otConsistencyCheckFailed)) {
            try SoftSpokenOT.send(setup: aliceSetup, prgId: prgId, message: tampered, from: 1)
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try SoftSpokenOT.send(setup: aliceSetup, prgId: prgId, message: Array(message.dropLast()), from: 1)
        }
    }

    /// A malicious Bob whose û is inconsistent in one or several blocks (column 0's choice flipped
    /// there) and who fixes t̃ for a guess of each such Δ_i passes exactly when every guess is right (and
    /// then learns those Δ_i): the per-row check asks one bit of Δ per deviated row.
    @Test func cheatingReceiverPassesExactlyWhenEveryGuessIsRight() throws {
        var rng = DeterministicRandom(seed: 42)
        var outcomes: Set<String> = []
        for trial in 0..<16 {
            let (bobSetup, aliceSetup) = try randomOTSetups(using: &rng)
            let prgId = rng.randomBytes(count: 32)
            // 1 to 4 cheated blocks (trial 15: all 64).
            let blockCount = trial == 15 ? 64 : 1 + trial % 4
            var blocks: Set<Int> = []
            while blocks.count < blockCount { blocks.insert(Int(rng.next() % 64)) }
            func actual(_ block: Int) -> UInt8 {
                UInt8((0..<4).reduce(UInt64(0)) { $0 | Bits.bit(aliceSetup.delta, 4 * block + $1) << UInt64($1) })
            }
            var guesses: [Int: UInt8] = [:]
            for block in blocks { guesses[block] = actual(block) }
            // Half the trials guess every block right (a cheater who knew them); the others miss one bit
            // of one block only.
            let right = trial % 2 == 0
            if !right, let missed = blocks.min() { guesses[missed]! ^= UInt8(1) << UInt8(rng.next() % 4) }
            let (_, message) = SoftSpokenOT.receive(setup: bobSetup, prgId: prgId, choices: rng.randomBytes(count: 64),
                                                    using: &rng, cheat: SoftSpokenOT.Cheat(guesses: guesses))
            let result = Result { () throws(ProtocolError) in try SoftSpokenOT.send(setup: aliceSetup, prgId: prgId, message: message, from: 1) }
            switch (result, right) {
            case (.failure(let error), false):
                #expect(error == .abortAndBan(party: 1, reason: .otConsistencyCheckFailed))
                outcomes.insert("caught")
            case (.success, true): outcomes.insert("passed")
            default: Issue.record("outcome does not follow the guesses of Δ_i for blocks \(blocks.sorted())")
            }
        }
        #expect(outcomes == ["caught", "passed"])
    }

    /// Issue 33 (PPRF proof at keygen): a bad GGM correction (Bob flips e_l^c of one tree) leaves Alice
    /// with wrong leaves exactly when she uses that correction (c = her base-OT choice bit), and then the
    /// PPRF consistency proof fails where she decodes the corrections, at keygen: Abort(Bob). Otherwise
    /// her leaves are right and the first extension passes. (v2 caught it only at the first signature.)
    @Test func issue33_badCorrectionIsAbortOfBobAtKeygenExactlyWhenUsed() throws {
        var rng = DeterministicRandom(seed: 43)
        var outcomes: Set<String> = []
        for _ in 0..<12 {
            let block = Int(rng.next() % 64), level = Int(rng.next() % 4), branch = Int(rng.next() % 2)
            let delta = rng.randomBytes(count: 32)
            let used = Bits.bit(delta, 4 * block + level) == UInt64(branch)
            let result = Result { () throws in
                try randomOTSetups(using: &rng, delta: delta) { corrections in
                    var bad = corrections
                    bad[block * 256 + level * 64 + branch * 32] ^= 1
                    return bad
                }
            }
            switch (result, used) {
            case (.failure(let error), true):
                #expect(error as? ProtocolError == .abort(party: 1, reason: .invalidProof))
                outcomes.insert("caught")
            case (.success(let (bob, alice)), false):
                let prgId = rng.randomBytes(count: 32)
                let (_, message) = SoftSpokenOT.receive(setup: bob, prgId: prgId, choices: rng.randomBytes(count: 64), using: &rng)
                _ = try SoftSpokenOT.send(setup: alice, prgId: prgId, message: message, from: 1)
                outcomes.insert("unused")
            default: Issue.record("outcome does not follow Alice's use of the correction")
            }
        }
        #expect(outcomes == ["caught", "unused"])
    }

    /// Issue 33: corrupting both corrections of one level (so Alice uses one of them whatever Δ_i is), or
    /// the proof itself, ends the setup with Abort(Bob) for every one of the 16 values of Δ_i; the honest
    /// corrections pass for every Δ_i.
    @Test func issue33_corruptedCorrectionIsAbortOfBobForEveryDelta() throws {
        var rng = DeterministicRandom(seed: 46)
        let block = 37
        for punctured in 0..<16 {
            var delta = rng.randomBytes(count: 32)
            for l in 0..<4 {
                let b = 4 * block + l
                delta[b >> 3] = (delta[b >> 3] & ~(1 << UInt8(b & 7))) | (UInt8((punctured >> l) & 1) << UInt8(b & 7))
            }
            let level = punctured % 4
            for tamper in ["both branches", "proof s̃", "proof t̃"] {
                #expect(throws: ProtocolError.abort(party: 1, reason: .invalidProof), "Δ_i = \(punctured), \(tamper)") {
                    _ = try randomOTSetups(using: &rng, delta: delta) { corrections in
                        var bad = corrections
                        switch tamper {
                        case "both branches":
                            bad[block * 256 + level * 64] ^= 0x80
                            bad[block * 256 + level * 64 + 32] ^= 0x80
                        case "proof s̃": bad[16_384 + 32 * block] ^= 1
                        default: bad[16_384 + 2_048 + 31] ^= 1
                        }
                        return bad
                    }
                }
            }
            _ = try randomOTSetups(using: &rng, delta: delta)
        }
    }

    @Test func malformedCorrectionIsAbortOfBob() throws {
        var rng = DeterministicRandom(seed: 44)
        let delta = rng.randomBytes(count: 32)
        let keys = (0..<256).map { _ in rng.randomBytes(count: 32) }
        for size in [0, 16_384, 18_463, 18_465] {
            #expect(throws: ProtocolError.abort(party: 3, reason: .malformedMessage)) {
                try SoftSpokenOT.SenderSetup(delta: delta, corrections: rng.randomBytes(count: size), chosenKeys: keys, from: 3)
            }
        }
        #expect(throws: ProtocolError.abort(party: 3, reason: .malformedMessage)) {
            try SoftSpokenOT.SenderSetup(delta: delta, corrections: rng.randomBytes(count: 18_464),
                                         chosenKeys: Array(keys.dropLast()), from: 3)
        }
    }

    /// One batch from fixed seeds (dkls23.md Appendix A): roots_i = H("kat"; "ss-root" ‖ u8(i)),
    /// prg_id = 0^32, x = 0xA5 × 80; Alice's setup from Δ = H("kat"; "ss-delta") and base-OT keys
    /// K_{b,c} = H("kat"; "ss-key" ‖ u32(b) ‖ u8(c)).
    @Test func batchKnownAnswers() throws {
        let bob = SoftSpokenOT.ReceiverSetup(roots: (0..<64).map { Self.key("ss-root", [UInt8($0)]) })
        let zero = (0..<256).map { Self.key("ss-key", DKLsHash.u32(UInt32($0)), [0]) }
        let one = (0..<256).map { Self.key("ss-key", DKLsHash.u32(UInt32($0)), [1]) }
        let delta = Self.key("ss-delta")
        let chosen = (0..<256).map { Bits.bit(delta, $0) == 1 ? one[$0] : zero[$0] }
        let corrections = bob.corrections(zeroKeys: zero, oneKeys: one)
        #expect(corrections.count == 18_464)
        #expect(SHA256.hash(Array(corrections[0..<16_384])) == hex("db50dd4f60886a668ccf112aff052c34f8690045c9b59aed6643f09112b248f3"))
        // The PPRF consistency proof (v3): s̃_0 and t̃.
        #expect(Array(corrections[16_384..<16_416]) == hex("b12892e6a066eeb7878793d7a055791034608fa4d4b5ccfa4f0abd0c881b8d34"))
        #expect(Array(corrections[18_432..<18_464]) == hex("1f6a1f82f4fbaa579619d8ffc3902c3fd72b9fac3e5b6f13b2e636b4dab3b71a"))
        let alice = try SoftSpokenOT.SenderSetup(delta: delta, corrections: corrections, chosenKeys: chosen, from: 1)
        let prgId = [UInt8](repeating: 0, count: 32)
        let extended = [UInt8](repeating: 0xA5, count: 80)
        let (t, message) = SoftSpokenOT.receive(setup: bob, prgId: prgId, extended: extended)
        #expect(message.count == 9_232)
        #expect(SHA256.hash(message) == hex("bc3432cceb985765f85a746083b99c5a589a25a2b74662033d00bb295a06d1f6"))
        #expect(t[0].bytes == hex("1030e31dbb7c3af15d5e631efb687486fe66e61af1e30afe230eb79c1bb57631"))
        #expect(t[511].bytes == hex("6f276e163ddb0cd2c07ea4492a3273ee1ad18f28bcbefc46d7b9fa57752eae5e"))
        let q = try SoftSpokenOT.send(setup: alice, prgId: prgId, message: message, from: 1)
        let d = GF256(littleEndian: delta)
        for j in [0, 1, 255, 511] { #expect(q[j] == t[j] ^ d.masked(by: Bits.bit(extended, j))) }
    }
}
