import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// Known answers of the DKLs23 spec, Appendix A, and the algebra of §6.6.
@Suite("DKLs23 building blocks: known answers", .heavy)
struct DKLsKnownAnswerTests {
    @Test func gf256() {
        var x255 = [UInt8](repeating: 0, count: 32)
        x255[31] = 0x80
        var x1 = [UInt8](repeating: 0, count: 32)
        x1[0] = 0x02
        let product = GF256.multiply(publicFactor: GF256(littleEndian: x255), secret: GF256(littleEndian: x1))
        #expect(product.bytes == hex("2504000000000000000000000000000000000000000000000000000000000000"))
        let a = GF256(littleEndian: DKLsHash.h("kat", Array("gf-a".utf8)))
        let b = GF256(littleEndian: DKLsHash.h("kat", Array("gf-b".utf8)))
        #expect(a.bytes == hex("fe67b966c0d1204158e8e24b4c5e2f55b538a87826cc19d38b6d8ac92667ea4e"))
        #expect(b.bytes == hex("c12b665fde8ab03a082144b3b88d72b8d1e8058c5a3ac150bf00ec9d0fb204ff"))
        #expect(GF256.multiply(publicFactor: a, secret: b).bytes
                == hex("a9b015c01200ecde3bc2f97618a0a156807da942d2d64d6174529dfc7e61f8e3"))
    }

    @Test func gf256FieldLaws() {
        var rng = DeterministicRandom(seed: 7)
        func random() -> GF256 { GF256(littleEndian: rng.randomBytes(count: 32)) }
        for _ in 0..<30 {
            let a = random(), b = random(), c = random()
            #expect(GF256.multiply(publicFactor: a, secret: b) == GF256.multiply(publicFactor: b, secret: a))
            #expect(GF256.multiply(publicFactor: a, secret: b ^ c)
                    == GF256.multiply(publicFactor: a, secret: b) ^ GF256.multiply(publicFactor: a, secret: c))
            let ab = GF256.multiply(publicFactor: a, secret: b)
            let bc = GF256.multiply(publicFactor: b, secret: c)
            #expect(GF256.multiply(publicFactor: ab, secret: c) == GF256.multiply(publicFactor: a, secret: bc))
        }
    }

    @Test func gadgetChallengesAndOutputs() {
        #expect(RVOLE.gadget[0].bytes == hex("7a2839a9c943bd7a9ae35d89f09997d7d42992add140fe4d33c3bb22b186d222"))
        #expect(RVOLE.gadget[511].bytes == hex("f75c383459fb543689d78fce248950265f1cf44d53b18159215b698ecddec212"))
        // v3 per-row check challenges (dkls23.md §9.3) for prg_id = 0^32, û = 0^5120; χ_0 ⊗ χ_1 checks GF(2^128)
        // against the interop prototype (interop/test_softspoken_check.py).
        let chi = SoftSpokenOT.challenges(prgId: [UInt8](repeating: 0, count: 32), matrix: [UInt8](repeating: 0, count: 5_120)[...])
        #expect(chi.count == 4)
        #expect(chi[0].bytes == hex("831d45797b511f65995af345c67503bc"))
        #expect(chi[3].bytes == hex("8683c1ffdea4a0f34f43d9d67f8ba67b"))
        #expect(GF128.multiply(publicFactor: chi[0], secret: chi[1]).bytes == hex("80b9b75307b76e87d2f69f8cc836c229"))
        let out = SoftSpokenOT.output(outId: [UInt8](repeating: 0, count: 32), index: 0, column: GF256(l0: 1, l1: 0, l2: 0, l3: 0))
        #expect(out.map(\.bytes) == [
            hex("f8cd1415d4e1fbc32668f7a079f8c10f215fb8cce6079b04f53ed228ba89b3ca"),
            hex("2472e68fb2f526524b63afc58f1f6614efe8df6dcf65fd1449250504d35a8a26"),
            hex("8d8614908ae6e6b2513be3e452df594bcd203ac94d06dadb6580d308e64dc131"),
        ])
    }

    /// dkls23.md §5: the compact frame of OTout is 102 bytes (one SHA-512 block holds ≤ 111) and starts
    /// with 0xFF, where every frame(…) starts with u32(21) — the two input sets are disjoint.
    @Test func compactFrameLayout() {
        let header = DKLsHash.compactHeader(DKLsHash.otOutputTag)
        #expect(header == [0xFF, 21] + Array("SilentShard-DKLs23-v1".utf8) + [9] + Array("ote/out-c".utf8))
        #expect(header.count + 32 + 4 + 1 + 32 == 102)
        #expect(DKLsHash.domain.frame("ote/out", [[]]).prefix(4) == [0, 0, 0, 21])
        // The plain definition is SHA-512 of exactly that layout, reduced mod q.
        let outId = [UInt8](repeating: 0xA5, count: 32), column = GF256(l0: 7, l1: 8, l2: 9, l3: 10)
        let input = header + outId + DKLsHash.u32(300) + [2] + column.bytes
        #expect(SoftSpokenOT.output(outId: outId, index: 300, column: column)[2]
                == (try? Secp256k1.Scalar(reducingWide: SHA512.hash(input))))
    }

    @Test func hotHashersEqualThePlainDefinitions() {
        var rng = DeterministicRandom(seed: 31)
        let prg = PRGHasher()
        for count in [1, 31, 32, 33, 112, 1000] {
            let seed = rng.randomBytes(count: 32), label = rng.randomBytes(count: 32)
            #expect(prg.bytes(seed: seed, label: label, count: count) == DKLsHash.prg(seed: seed, label: label, count: count))
        }
        let outId = rng.randomBytes(count: 32)
        let hasher = OTOutputHasher(outId: outId)
        for index in [0, 1, 511] {
            let column = GF256(littleEndian: rng.randomBytes(count: 32))
            let fast = hasher.output(index: index, column: column)
            #expect([fast.0, fast.1, fast.2] == SoftSpokenOT.output(outId: outId, index: index, column: column))
        }
    }

    @Test func lagrangeCoefficients() throws {
        // Appendix A: points {x_0 = 5, x_1 = 9}: λ_0 = 9/4.
        var points = [Secp256k1.Scalar(5), Secp256k1.Scalar(9)]
        #expect(try Lagrange.coefficient(of: 0, in: [0, 1], points: points).bytes
                == hex("bfffffffffffffffffffffffffffffff0c0325ad0376782ccfddc6e99c28b0f3"))
        // Interpolation at a point: f(X) = 3 + 2X through (5, 13), (9, 21) gives f(7) = 17.
        points.append(Secp256k1.Scalar(7))
        let at7 = try Lagrange.coefficient(of: 0, in: [0, 1], points: points, at: Secp256k1.Scalar(7)) * Secp256k1.Scalar(13)
            + Lagrange.coefficient(of: 1, in: [0, 1], points: points, at: Secp256k1.Scalar(7)) * Secp256k1.Scalar(21)
        #expect(at7 == Secp256k1.Scalar(17))
    }

    @Test func hashToCurve() throws {
        let pathBytes = hex("058000002c8000003c800000000000000000000005")
        let point = try DKLsHash.hashToCurve("hd/h2c", Secp256k1.Point.generator.compressed() + pathBytes)
        #expect(try point.compressed() == hex("022bb389d277468e64cce80070cd0180b08b8696e1576693514400b5ece2876b90"))
    }

    @Test func bitMatrixTranspose() {
        var rng = DeterministicRandom(seed: 8)
        let rows = (0..<256).map { _ in rng.randomBytes(count: 112) }
        let columns = Bits.columns(ofRows: rows, columnCount: 896)
        // Every entry of the matrix.
        var mismatches = 0
        for b in 0..<256 {
            for j in 0..<896 where Bits.bit(rows[b], j) != Bits.bit(columns[j].bytes, b) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }
}

@Suite("DKLs23 building blocks: OT, OT extension, RVOLE", .heavy)
struct DKLsOTTests {
    @Test func endemicOTGivesTheChosenKeys() throws {
        var rng = DeterministicRandom(seed: 20)
        let choices = rng.randomBytes(count: 32)
        let popf = rng.randomBytes(count: 32), keyContext = rng.randomBytes(count: 32)
        let (receiver, message1) = try EndemicOT.Receiver.start(popfContext: popf, choices: choices, using: &rng)
        #expect(message1.count == 16_896)
        let (sender, message2) = try EndemicOT.Sender.respond(popfContext: popf, message1: message1, from: 1, using: &rng)
        #expect(message2.count == 33)   // one sender point z for the whole batch
        let aliceKeys = try receiver.keys(keyContext: keyContext, message2: message2, from: 0)
        let bobKeys = try sender.keys(keyContext: keyContext)
        for j in 0..<256 {
            let chosen = Bits.bit(choices, j) == 1 ? bobKeys.one[j] : bobKeys.zero[j]
            let other = Bits.bit(choices, j) == 1 ? bobKeys.zero[j] : bobKeys.one[j]
            #expect(aliceKeys[j] == chosen)
            #expect(aliceKeys[j] != other)
        }
        // A different POPF context on Bob's side breaks the correlation.
        let (wrongSender, wrongMessage2) = try EndemicOT.Sender.respond(popfContext: keyContext, message1: message1, from: 1, using: &rng)
        let wrongBob = try wrongSender.keys(keyContext: keyContext)
        let wrongAlice = try receiver.keys(keyContext: keyContext, message2: wrongMessage2, from: 0)
        #expect(wrongAlice[0] != wrongBob.zero[0] && wrongAlice[0] != wrongBob.one[0])
    }

    /// dkls23.md §8: Bob's point z is shared by the batch, so every key hash must bind j. A malicious
    /// Alice sending the same (r_0, r_1) at two indices still gets unrelated keys, and all 512 of Bob's
    /// keys differ.
    @Test func endemicOTKeysAreBoundToTheIndex() throws {
        var rng = DeterministicRandom(seed: 23)
        let popf = rng.randomBytes(count: 32), keyContext = rng.randomBytes(count: 32)
        let (_, honest) = try EndemicOT.Receiver.start(popfContext: popf, choices: rng.randomBytes(count: 32), using: &rng)
        var replayed = honest
        replayed.replaceSubrange(66..<132, with: honest[0..<66])   // pair 1 := pair 0
        let (sender, message2) = try EndemicOT.Sender.respond(popfContext: popf, message1: replayed, from: 1, using: &rng)
        #expect(message2.count == 33)
        let keys = try sender.keys(keyContext: keyContext)
        #expect(keys.zero[0] != keys.zero[1] && keys.one[0] != keys.one[1])
        #expect(Set(keys.zero + keys.one).count == 512)
    }

    /// dkls23.md §8: r_{j,1−c_j} is a random x with a random parity; both parities occur and every
    /// encoding decodes.
    @Test func randomPointsDecodeWithBothParities() {
        var rng = DeterministicRandom(seed: 24)
        let encodings = (0..<64).map { _ in EndemicOT.randomPointEncoding(using: &rng) }
        #expect(encodings.allSatisfy { (try? Secp256k1.Point(compressed: $0)) != nil })
        #expect(Set(encodings.map { $0[0] }) == [0x02, 0x03])
        #expect(Set(encodings).count == 64)
    }

    /// Issue 33: Alice's message-1 work must not depend on Δ. On one RNG stream, choices Δ and ¬Δ take the
    /// same number of hash-to-curve tries (v2 hashed only her chosen branch, so the count followed Δ).
    @Test func issue33_baseOTHashToCurveTriesAreTheSameForDeltaAndItsComplement() throws {
        let popf = [UInt8](repeating: 7, count: 32)
        var counts: [Int] = []
        for seed: UInt64 in [3303, 3304] {
            var probe = DeterministicRandom(seed: seed)
            let delta = probe.randomBytes(count: 32)
            for choices in [delta, delta.map { ~$0 }] {
                var rng = DeterministicRandom(seed: seed + 100)
                let (receiver, _) = try EndemicOT.Receiver.start(popfContext: popf, choices: choices, using: &rng)
                counts.append(receiver.popfHashTries)
            }
        }
        #expect(counts[0] == counts[1], "tries for Δ and ¬Δ: \(counts[0]) vs \(counts[1])")
        #expect(counts[2] == counts[3], "tries for Δ and ¬Δ: \(counts[2]) vs \(counts[3])")
    }

    /// Issue 33: the POPF hash takes y's parity from a hash bit, so its points are uniform in G (MRR21's
    /// Thm 14 assumes that), not only the even-y half v2's H2C produced.
    @Test func issue33_popfHashPointsHaveBothParities() throws {
        var rng = DeterministicRandom(seed: 3305)
        let popf = [UInt8](repeating: 9, count: 32), other = EndemicOT.randomPointEncoding(using: &rng)
        let prefixes = try (0..<64).map { j throws in try EndemicOT.popfHash(context: popf, index: j, branch: 0, other: other).compressed()[0] }
        #expect(Set(prefixes) == [0x02, 0x03])
    }

    @Test func endemicOTRejectsABadSenderPoint() throws {
        var rng = DeterministicRandom(seed: 25)
        let popf = rng.randomBytes(count: 32)
        let (receiver, message1) = try EndemicOT.Receiver.start(popfContext: popf, choices: rng.randomBytes(count: 32), using: &rng)
        let (_, message2) = try EndemicOT.Sender.respond(popfContext: popf, message1: message1, from: 1, using: &rng)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try receiver.keys(keyContext: popf, message2: message2 + [0], from: 1)
        }
        var badPrefix = message2
        badPrefix[0] = 0x04
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try receiver.keys(keyContext: popf, message2: badPrefix, from: 1)
        }
        // x = p − 1 is not the x-coordinate of a point of secp256k1 ((p−1)³ + 7 = 6 is not a square mod p).
        let offCurve = [0x02] + hex("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2e")
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try receiver.keys(keyContext: popf, message2: offCurve, from: 1)
        }
    }

    @Test func endemicOTRejectsMalformedMessages() throws {
        var rng = DeterministicRandom(seed: 21)
        let popf = rng.randomBytes(count: 32)
        let (_, message1) = try EndemicOT.Receiver.start(popfContext: popf, choices: rng.randomBytes(count: 32), using: &rng)
        #expect(throws: ProtocolError.abort(party: 4, reason: .malformedMessage)) {
            try EndemicOT.Sender.respond(popfContext: popf, message1: Array(message1.dropLast()), from: 4, using: &rng)
        }
        var badPoint = message1
        badPoint[33] = 0x05
        #expect(throws: ProtocolError.abort(party: 4, reason: .malformedMessage)) {
            try EndemicOT.Sender.respond(popfContext: popf, message1: badPoint, from: 4, using: &rng)
        }
    }

    @Test func rvoleProducesAdditiveSharesOfTheProducts() throws {
        var rng = DeterministicRandom(seed: 24)
        let (bobSetup, aliceSetup) = try randomOTSetups(using: &rng)
        let prgId = rng.randomBytes(count: 32), outId = rng.randomBytes(count: 32), vsid = rng.randomBytes(count: 32)
        let (bob, kosMessage) = RVOLE.sample(setup: bobSetup, prgId: prgId, using: &rng)
        let a0 = Secp256k1.Scalar.random(using: &rng), a1 = Secp256k1.Scalar.random(using: &rng)
        let (c, message) = try RVOLE.multiply(setup: aliceSetup, prgId: prgId, outId: outId, vsid: vsid,
                                              kosMessage: kosMessage, from: 0, inputs: (a0, a1), using: &rng)
        #expect(message.count == 49_248)
        let d = try RVOLE.complete(state: bob, outId: outId, vsid: vsid, message: message, from: 1)
        #expect(c.0 + d.0 == a0 * bob.chi)
        #expect(c.1 + d.1 == a1 * bob.chi)
    }

    @Test func rvoleCheatingAliceIsCaughtExactlyWhenBobsChoiceBitIsSet() throws {
        // Alice perturbs one OT row of ã (θ and μ derived consistently): Bob's μ check fails exactly
        // when his β_j = 1 (selective failure, hence the ban); otherwise the products stay correct.
        var rng = DeterministicRandom(seed: 25)
        var outcomes: Set<String> = []
        for _ in 0..<12 {
            let (bobSetup, aliceSetup) = try randomOTSetups(using: &rng)
            let prgId = rng.randomBytes(count: 32), outId = rng.randomBytes(count: 32), vsid = rng.randomBytes(count: 32)
            let (bob, kosMessage) = RVOLE.sample(setup: bobSetup, prgId: prgId, using: &rng)
            let a0 = Secp256k1.Scalar.random(using: &rng), a1 = Secp256k1.Scalar.random(using: &rng)
            let row = Int(rng.next() % 512)
            let (c, message) = try RVOLE.multiply(setup: aliceSetup, prgId: prgId, outId: outId, vsid: vsid,
                                                  kosMessage: kosMessage, from: 0, inputs: (a0, a1), using: &rng,
                                                  cheatingRow: row)
            let result = Result { () throws(ProtocolError) in
                try RVOLE.complete(state: bob, outId: outId, vsid: vsid, message: message, from: 1)
            }
            switch (result, Bits.bit(bob.choices, row)) {
            case (.failure(let error), 1):
                #expect(error == .abortAndBan(party: 1, reason: .multiplicationCheckFailed))
                outcomes.insert("caught")
            case (.success(let d), 0):
                #expect(c.0 + d.0 == a0 * bob.chi)
                outcomes.insert("undetected")
            default: Issue.record("outcome does not follow β_j")
            }
        }
        #expect(outcomes == ["caught", "undetected"])
    }

    @Test func rvoleRejectsTamperedMessages() throws {
        var rng = DeterministicRandom(seed: 26)
        let (bobSetup, aliceSetup) = try randomOTSetups(using: &rng)
        let prgId = rng.randomBytes(count: 32), outId = rng.randomBytes(count: 32), vsid = rng.randomBytes(count: 32)
        let (bob, kosMessage) = RVOLE.sample(setup: bobSetup, prgId: prgId, using: &rng)
        let (_, message) = try RVOLE.multiply(setup: aliceSetup, prgId: prgId, outId: outId, vsid: vsid, kosMessage: kosMessage,
                                              from: 0, inputs: (.one, .one), using: &rng)
        var flippedMu = message
        flippedMu[message.count - 1] ^= 1
        #expect(throws: ProtocolError.abortAndBan(party: 1, reason: .multiplicationCheckFailed)) {
            try RVOLE.complete(state: bob, outId: outId, vsid: vsid, message: flippedMu, from: 1)
        }
        var outOfRange = message
        outOfRange.replaceSubrange(0..<32, with: [UInt8](repeating: 0xFF, count: 32))
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try RVOLE.complete(state: bob, outId: outId, vsid: vsid, message: outOfRange, from: 1)
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try RVOLE.complete(state: bob, outId: outId, vsid: vsid, message: Array(message.dropLast()), from: 1)
        }
    }
}
