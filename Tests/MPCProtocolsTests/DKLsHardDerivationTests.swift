import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

@Suite("DKLs23 hard derivation", .heavy)
struct DKLsHardDerivationTests {
    static let trio = Result { try DKLsHarness.keygen(n: 3, t: 2, seed: 2_300) }
    static let duo = Result { try DKLsHarness.keygen(n: 2, t: 2, seed: 2_200) }
    static let path = Result { try DerivationPath("m/44'/60'/0'/0/5", allowHardened: true) }

    static func derive(_ keyshares: [DKLsKeyshare], _ set: [PartyIndex], path: DerivationPath, seed: UInt64,
                       tamper: @escaping DKLsInProcess.Tamper = { $1 },
                       observe: @escaping DKLsInProcess.Observe = { _ in }) throws -> [DKLsKeyshare] {
        var rng = DeterministicRandom(seed: seed)
        return try DKLsInProcess.hardDerive(set.map { keyshares[Int($0)] }, path: path, using: &rng,
                                            tamper: tamper, observe: observe)
    }

    static func hash(_ text: String) -> [UInt8] { SHA256.hash(Array(text.utf8)) }

    @Test func hashToCurveKnownAnswer() throws {
        let input = try Secp256k1.Point.generator.compressed() + Self.path.get().bytes
        #expect(try DKLsHash.hashToCurve("hd/h2c", input).compressed()
                == hex("022bb389d277468e64cce80070cd0180b08b8696e1576693514400b5ece2876b90"))
    }

    @Test func dleqProofRoundTripAndRejection() throws {
        var rng = DeterministicRandom(seed: 1)
        let ctx = rng.randomBytes(count: 32)
        let base = try DKLsHash.hashToCurve("kat", [1])
        let e = Secp256k1.Scalar.random(using: &rng)
        let a = Secp256k1.Point(base: e), b = e * base
        let proof = try DLEQProof.prove(context: ctx, label: [3], secret: e, base: base, a: a, b: b, using: &rng)
        #expect(proof.count == 64)
        try DLEQProof.verify(proof, context: ctx, label: [3], base: base, a: a, b: b, from: 3)
        let invalid = ProtocolError.abort(party: 3, reason: .invalidProof)
        #expect(throws: invalid) { try DLEQProof.verify(proof, context: ctx, label: [4], base: base, a: a, b: b, from: 3) }
        #expect(throws: invalid) { try DLEQProof.verify(proof, context: [0] + ctx.dropFirst(), label: [3], base: base, a: a, b: b, from: 3) }
        #expect(throws: invalid) { try DLEQProof.verify(proof, context: ctx, label: [3], base: base, a: a, b: b + .generator, from: 3) }
        #expect(throws: invalid) { try DLEQProof.verify(proof, context: ctx, label: [3], base: base, a: a + .generator, b: b, from: 3) }
        #expect(throws: invalid) { try DLEQProof.verify(Array(proof.dropLast()), context: ctx, label: [3], base: base, a: a, b: b, from: 3) }
        // Same discrete log in a different base: the statement B = e·H′ is false for H.
        let other = try DKLsHash.hashToCurve("kat", [2])
        #expect(throws: invalid) { try DLEQProof.verify(proof, context: ctx, label: [3], base: other, a: a, b: e * other, from: 3) }
        var high = proof
        high.replaceSubrange(0..<32, with: [UInt8](repeating: 0xFF, count: 32))   // c ≥ q
        #expect(throws: invalid) { try DLEQProof.verify(high, context: ctx, label: [3], base: base, a: a, b: b, from: 3) }
    }

    @Test func sameChildForEverySetAndMessageSize() throws {
        let keyshares = try Self.trio.get(), path = try Self.path.get()
        var children: [[PartyIndex]: [DKLsKeyshare]] = [:]
        for (index, set) in ([[0, 1], [0, 2], [1, 2], [0, 1, 2]] as [[PartyIndex]]).enumerated() {
            var sizes: [Int] = []
            children[set] = try Self.derive(keyshares, set, path: path, seed: UInt64(10 + index),
                                         observe: { sizes.append($0.payload.count) })
            #expect(sizes == Array(repeating: 129, count: set.count))
        }
        let reference = try #require(children[[0, 1]]?.first)
        for (set, derived) in children {
            for (position, child) in derived.enumerated() {
                #expect(child.publicKey == reference.publicKey && child.rootChainCode == reference.rootChainCode)
                #expect(child.keyId == reference.keyId && child.generation == reference.generation)
                #expect(child.partyIndex == set[position])
                #expect(child.vrfPublicKey == keyshares[0].vrfPublicKey)
                // A party's child share is the same whichever set derived it.
                let parent = keyshares[Int(child.partyIndex)]
                #expect(child.share - parent.share == reference.share - keyshares[0].share)
                // Kept from the parent (dkls23.md §15 step 9).
                #expect(child.evaluationPoints == parent.evaluationPoints && child.vrfShare == parent.vrfShare)
                #expect(child.vrfPublicShares == parent.vrfPublicShares && child.pairwise == parent.pairwise)
            }
        }
        let parent = keyshares[0]
        let tweak = reference.share - parent.share
        #expect(reference.publicKey == parent.publicKey + Secp256k1.Point(base: tweak))
        #expect(reference.publicKey != parent.publicKey && reference.rootChainCode != parent.rootChainCode)
        #expect(reference.keyId == DKLsHash.h("key-id", try reference.publicKey.compressed()))
        #expect(reference.generation == DKLsHash.h("hd/gen", parent.generation, try reference.publicKey.compressed()))
        // Test-only reconstruction: the child secret is the parent secret plus δ.
        let parentSecret = try DKLsHarness.reconstruct([keyshares[1], keyshares[2]])
        let childSecret = try DKLsHarness.reconstruct(try #require(children[[1, 2]]))
        #expect(childSecret == parentSecret + tweak)
        // The child keyshare survives its own encoding and load checks.
        let reloaded = try DKLsKeyshare(serialized: reference.serialized())
        #expect(reloaded.publicKey == reference.publicKey && reloaded.share == reference.share)
    }

    @Test func differentPathGivesDifferentChild() throws {
        let keyshares = try Self.trio.get()
        let a = try Self.derive(keyshares, [0, 1], path: DerivationPath("m/1'", allowHardened: true), seed: 1)
        let b = try Self.derive(keyshares, [0, 1], path: DerivationPath("m/2'", allowHardened: true), seed: 2)
        let c = try Self.derive(keyshares, [0, 1], path: DerivationPath("m/1", allowHardened: true), seed: 3)
        let root = try Self.derive(keyshares, [0, 1], path: .root, seed: 4)
        let keys = [a, b, c, root].map { $0[0].publicKey }
        #expect(Set(try keys.map { try $0.compressed() }).count == 4)
        #expect(!keys.contains(keyshares[0].publicKey))
    }

    @Test func childKeysharesSignAcrossDerivationRuns() throws {
        let keyshares = try Self.trio.get(), path = try Self.path.get()
        // Party 0's child from {0, 1} signs with party 2's child from {1, 2}.
        let first = try Self.derive(keyshares, [0, 1], path: path, seed: 21)
        let second = try Self.derive(keyshares, [1, 2], path: path, seed: 22)
        let children = [first[0], first[1], second[1]]
        let hash = Self.hash("hard child")
        let (signature, _) = try DKLsHarness.sign(children, signers: [0, 2], hash: hash, seed: 23)
        #expect(signature.isLowS)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: children[0].publicKey))
        #expect(try Secp256k1.ECDSA.recoverPublicKey(signature, hash: hash) == children[0].publicKey)
        #expect(!Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: keyshares[0].publicKey))

        // Soft derivation below the hard child.
        let soft = try DerivationPath("m/0/7")
        let derived = try soft.derive(publicKey: children[0].publicKey, chainCode: children[0].rootChainCode)
        let hash2 = Self.hash("soft below hard")
        let (signature2, _) = try DKLsHarness.sign(children, signers: [1, 2], hash: hash2, path: soft, seed: 24)
        #expect(Secp256k1.ECDSA.verify(signature2, hash: hash2, publicKey: derived.publicKey))
    }

    @Test func duoChildSigns() throws {
        let keyshares = try Self.duo.get()
        let children = try Self.derive(keyshares, [0, 1], path: DerivationPath("m/7'/1", allowHardened: true), seed: 31)
        let hash = Self.hash("duo hard child")
        let (signature, _) = try DKLsHarness.sign(children, signers: [0, 1], hash: hash, seed: 32)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: children[0].publicKey))
        // Re-deriving gives the same child.
        let again = try Self.derive(keyshares, [0, 1], path: DerivationPath("m/7'/1", allowHardened: true), seed: 33)
        #expect(again[1].share == children[1].share && again[1].rootChainCode == children[1].rootChainCode)
    }

    /// Rewrites party `from`'s broadcast payload.
    static func rewrite(_ from: PartyIndex, _ change: @escaping ([UInt8]) -> [UInt8]) -> DKLsInProcess.Tamper {
        { _, messages in
            messages.map { m in
                m.from == from ? ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: change(m.payload)) : m
            }
        }
    }

    @Test func wrongPartialEvaluationIsAbortByDLEQ() throws {
        let keyshares = try Self.trio.get(), path = try Self.path.get()
        // D_1 replaced by another valid point (D_1 + G): the proof no longer matches.
        let tamper = Self.rewrite(1) { payload in
            guard let d = try? Secp256k1.Point(compressed: payload[32..<65]),
                  let shifted = try? (d + .generator).compressed() else { return payload }
            return Array(payload[0..<32]) + shifted + Array(payload[65...])
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidProof)) {
            try Self.derive(keyshares, [0, 1, 2], path: path, seed: 41, tamper: tamper)
        }
        // D_2 honestly computed for another path, with a valid proof for that path: still Abort(2).
        var rng = DeterministicRandom(seed: 42)
        let otherPath = try DerivationPath("m/45'", allowHardened: true)
        let instance = rng.randomBytes(count: 32)
        let p2 = try DKLsHardDerivation.Parameters(keyshare: keyshares[2], participants: [0, 2], instanceId: instance,
                                                   setupHash: instance, path: otherPath)
        let p0 = try DKLsHardDerivation.Parameters(keyshare: keyshares[0], participants: [0, 2], instanceId: instance,
                                                   setupHash: instance, path: path)
        let (state0, _) = try DKLsHardDerivation.start(p0, using: &rng)
        let (_, message2) = try DKLsHardDerivation.start(p2, using: &rng)
        // Different path ⇒ different ctx: caught at the context check.
        #expect(throws: ProtocolError.abort(party: 2, reason: .sessionMismatch)) { try state0.finish([message2]) }
        // Same ctx forged in, D and proof from the other path: the DLEQ check catches it.
        let forged = ProtocolMessage(tag: message2.tag, from: 2, to: nil, payload: state0.context + Array(message2.payload[32...]))
        #expect(throws: ProtocolError.abort(party: 2, reason: .invalidProof)) { try state0.finish([forged]) }
    }

    @Test func wrongContextIsAbort() throws {
        let keyshares = try Self.trio.get(), path = try Self.path.get()
        let tamper = Self.rewrite(2) { payload in var p = payload; p[5] ^= 0x40; return p }
        #expect(throws: ProtocolError.abort(party: 2, reason: .sessionMismatch)) {
            try Self.derive(keyshares, [0, 2], path: path, seed: 51, tamper: tamper)
        }
        // Participants disagreeing on the set (ctx binds enc(S)).
        var rng = DeterministicRandom(seed: 52)
        let instance = rng.randomBytes(count: 32)
        let p0 = try DKLsHardDerivation.Parameters(keyshare: keyshares[0], participants: [0, 1], instanceId: instance,
                                                   setupHash: instance, path: path)
        let p1 = try DKLsHardDerivation.Parameters(keyshare: keyshares[1], participants: [0, 1, 2], instanceId: instance,
                                                   setupHash: instance, path: path)
        let (state0, _) = try DKLsHardDerivation.start(p0, using: &rng)
        let (_, message1) = try DKLsHardDerivation.start(p1, using: &rng)
        #expect(throws: ProtocolError.abort(party: 1, reason: .sessionMismatch)) { try state0.finish([message1]) }
    }

    @Test func malformedMessagesAreAbort() throws {
        let keyshares = try Self.duo.get(), path = try Self.path.get()
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try Self.derive(keyshares, [0, 1], path: path, seed: 61, tamper: Self.rewrite(1) { $0 + [0] })
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try Self.derive(keyshares, [0, 1], path: path, seed: 62, tamper: Self.rewrite(1) { p in
                var q = p; q[32] = 0x04; return q   // not a compressed point prefix
            })
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidProof)) {
            try Self.derive(keyshares, [0, 1], path: path, seed: 63, tamper: Self.rewrite(1) { p in
                var q = p; q[128] ^= 1; return q
            })
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .missingMessages)) {
            try Self.derive(keyshares, [0, 1], path: path, seed: 64, tamper: { _, m in m.filter { $0.from != 1 } })
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .duplicateMessage)) {
            try Self.derive(keyshares, [0, 1], path: path, seed: 65, tamper: { _, m in m + m.filter { $0.from == 1 } })
        }
    }

    @Test func threeOfFiveSameChildAndSigns() throws {
        let keyshares = try DKLsHarness.keygen(n: 5, t: 3, seed: 2_500)
        let path = try DerivationPath("m/1'/2'/3", allowHardened: true)
        let a = try Self.derive(keyshares, [0, 1, 2], path: path, seed: 71)
        let b = try Self.derive(keyshares, [1, 3, 4], path: path, seed: 72)
        #expect(a[0].publicKey == b[0].publicKey && a[1].share == b[0].share)
        let hash = Self.hash("3-of-5 hard child")
        let children = [a[0], a[1], a[2], b[1], b[2]]
        let (signature, _) = try DKLsHarness.sign(children, signers: [0, 3, 4], hash: hash, seed: 73)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: a[0].publicKey))
    }

    @Test func nonParticipantIsUnexpectedSender() throws {
        let keyshares = try Self.trio.get(), path = try Self.path.get()
        var rng = DeterministicRandom(seed: 81)
        let id = rng.randomBytes(count: 32)
        let p0 = try DKLsHardDerivation.Parameters(keyshare: keyshares[0], participants: [0, 1], instanceId: id, setupHash: id, path: path)
        let p1 = try DKLsHardDerivation.Parameters(keyshare: keyshares[1], participants: [0, 1], instanceId: id, setupHash: id, path: path)
        let p2 = try DKLsHardDerivation.Parameters(keyshare: keyshares[2], participants: [0, 2], instanceId: id, setupHash: id, path: path)
        let (state0, _) = try DKLsHardDerivation.start(p0, using: &rng)
        let (_, message1) = try DKLsHardDerivation.start(p1, using: &rng)
        let (_, message2) = try DKLsHardDerivation.start(p2, using: &rng)
        #expect(throws: ProtocolError.abort(party: 2, reason: .unexpectedSender)) { try state0.finish([message1, message2]) }
        _ = try state0.finish([message1])
    }

    @Test func parametersAreValidated() throws {
        let keyshares = try Self.trio.get(), path = try Self.path.get()
        let id = [UInt8](repeating: 1, count: 32)
        for bad in [[0], [1, 2], [0, 0, 1], [0, 3]] as [[PartyIndex]] {
            #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
                try DKLsHardDerivation.Parameters(keyshare: keyshares[0], participants: bad, instanceId: id, setupHash: id, path: path)
            }
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsHardDerivation.Parameters(keyshare: keyshares[0], participants: [0, 1], instanceId: [1], setupHash: id, path: path)
        }
    }
}
