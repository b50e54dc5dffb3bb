import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// Every rejected message is a typed error naming the sender, and the state machine does not
/// advance: the same state then still accepts the good message.
@Suite("FROST bad messages and single-use presignatures", .heavy)
struct FROSTBadMessageTests {
    static let nonCanonical = try! Hex.decode("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")   // y = p
    static let smallOrder = try! Hex.decode("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")     // order 2
    static let identity = [UInt8(1)] + [UInt8](repeating: 0, count: 31)
    static let notOnCurveVector = try! Hex.decode("123456f9e9d319cad973b84cc4c835c8ee73281f5e2638d2d2b352c09edccbfb") // elements.json
    static let badPoints = [nonCanonical, smallOrder, identity, notOnCurveVector]

    func keyshares(_ t: UInt8, _ n: UInt8, seed: UInt64) throws -> [FROST.Keyshare] {
        var rng = DeterministicRandom(seed: seed)
        return try FROST.LocalRun.keygen(threshold: t, parties: n, using: &rng)
    }

    @Test func invalidElementVectorIsRejected() throws {
        let v = try FROSTVectors.load("elements.json")
        let bytes = try frostHex((v["elements"] as? [String: Any])?["invalid_element"])
        #expect(throws: CryptoError.self) { try Ed25519.Point(bytes: bytes) }
    }

    @Test func signingRound1() throws {
        var rng = DeterministicRandom(seed: 51)
        let shares = try keyshares(2, 3, seed: 50)
        let p0 = FROST.Presignature(keyshare: shares[0], using: &rng)
        let p1 = FROST.Presignature(keyshare: shares[1], using: &rng)
        var session = try FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: [1], presignature: p0)
        let good = p1.round1Message
        #expect(good.count == 64)
        let malformed = ProtocolError.abort(party: 1, reason: .malformedMessage)
        #expect(throws: malformed) { try session.receiveRound1(Array(good.dropLast()), from: 1) }
        #expect(throws: malformed) { try session.receiveRound1(good + [0], from: 1) }
        #expect(throws: malformed) { try session.receiveRound1([], from: 1) }
        for bad in Self.badPoints {
            #expect(throws: malformed) { try session.receiveRound1(bad + Array(good[32...]), from: 1) }
            #expect(throws: malformed) { try session.receiveRound1(Array(good[..<32]) + bad, from: 1) }
        }
        // Not in the session (a real party, and an index outside the key), and ourselves.
        #expect(throws: ProtocolError.abort(party: 2, reason: .unexpectedSender)) { try session.receiveRound1(good, from: 2) }
        #expect(throws: ProtocolError.abort(party: 9, reason: .unexpectedSender)) { try session.receiveRound1(good, from: 9) }
        #expect(throws: ProtocolError.abort(party: 0, reason: .unexpectedSender)) { try session.receiveRound1(good, from: 0) }
        // Round 2 before round 1 is complete, and a round-2 message too early.
        #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) { try session.round2() }
        #expect(throws: ProtocolError.abort(party: 1, reason: .unexpectedRound)) { try session.receiveRound2([UInt8](repeating: 0, count: 64), from: 1) }
        #expect(!p0.isConsumed)
        // The state did not advance: the good message is still accepted, once.
        try session.receiveRound1(good, from: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .duplicateMessage)) { try session.receiveRound1(good, from: 1) }
        #expect(session.hasAllRound1)
    }

    /// A two-signer session run up to the exchange of round-2 messages.
    func twoSigners(seed: UInt64, message: [UInt8] = [5, 6]) throws -> (FROST.SigningSession, [UInt8], [FROST.Keyshare]) {
        var rng = DeterministicRandom(seed: seed)
        let shares = try keyshares(2, 3, seed: seed + 1)
        var a = try FROST.SigningSession(keyshare: shares[0], signers: [0, 2], message: message,
                                         presignature: FROST.Presignature(keyshare: shares[0], using: &rng))
        var b = try FROST.SigningSession(keyshare: shares[2], signers: [0, 2], message: message,
                                         presignature: FROST.Presignature(keyshare: shares[2], using: &rng))
        try a.receiveRound1(b.round1Message, from: 2)
        try b.receiveRound1(a.round1Message, from: 0)
        _ = try a.round2()
        let fromB = try b.round2()
        return (a, fromB, shares)
    }

    @Test func signingRound2AndBlame() throws {
        var (a, good, _) = try twoSigners(seed: 60)
        let malformed = ProtocolError.abort(party: 2, reason: .malformedMessage)
        #expect(throws: malformed) { try a.receiveRound2(Array(good.dropLast()), from: 2) }
        #expect(throws: malformed) { try a.receiveRound2(good + [0], from: 2) }
        // Non-canonical scalar (ℓ itself).
        let ell = try Hex.decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")
        #expect(throws: malformed) { try a.receiveRound2(Array(good[..<32]) + ell, from: 2) }
        #expect(throws: ProtocolError.abort(party: 1, reason: .unexpectedSender)) { try a.receiveRound2(good, from: 1) }
        // A different view of the transcript (e.g. another message) is caught before blaming shares.
        var otherView = good
        otherView[0] ^= 1
        #expect(throws: ProtocolError.abort(party: 2, reason: .transcriptMismatch)) { try a.receiveRound2(otherView, from: 2) }
        #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) { try a.signature() }
        // An invalid share with the right transcript: the aggregate fails and names party 2.
        var tampered = a
        let z = try Ed25519.Scalar(bytes: good[32...])
        try tampered.receiveRound2(Array(good[..<32]) + (z + .one).bytes, from: 2)
        #expect(throws: ProtocolError.signingFailed(party: 2, reason: .invalidSignatureShare)) { try tampered.signature() }
        // The untouched state still accepts the good share and signs.
        try a.receiveRound2(good, from: 2)
        #expect(throws: ProtocolError.abort(party: 2, reason: .duplicateMessage)) { try a.receiveRound2(good, from: 2) }
        let signature = try a.signature()
        #expect(try Ed25519.VerifyingKey(bytes: a.signingKey.bytes).isValidSignature(signature, for: [5, 6]))
    }

    @Test func presignatureIsSingleUse() throws {
        var rng = DeterministicRandom(seed: 70)
        let shares = try keyshares(2, 2, seed: 71)
        let p0 = FROST.Presignature(keyshare: shares[0], using: &rng)
        let p1 = FROST.Presignature(keyshare: shares[1], using: &rng)
        #expect(!p0.description.contains("hiding"))
        // Two sessions opened on the same presignature: only the first round 2 succeeds.
        var first = try FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: [1], presignature: p0)
        var second = try FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: [2], presignature: p0)
        try first.receiveRound1(p1.round1Message, from: 1)
        try second.receiveRound1(p1.round1Message, from: 1)
        _ = try first.round2()
        #expect(p0.isConsumed)
        #expect(throws: ProtocolError.invalidInput(.presignatureAlreadyUsed)) { try second.round2() }
        #expect(throws: ProtocolError.invalidInput(.presignatureAlreadyUsed)) {
            try FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: [3], presignature: p0)
        }
        #expect(throws: ProtocolError.invalidInput(.stateAlreadyConsumed)) { try first.round2() }
        // A presignature of another party or keyshare.
        #expect(throws: ProtocolError.invalidInput(.presignatureMismatch)) {
            try FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: [3], presignature: p1)
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try FROST.SigningSession(keyshare: shares[1], signers: [1], message: [3], presignature: p1)
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try FROST.SigningSession(keyshare: shares[1], signers: [1, 1], message: [3], presignature: p1)
        }
    }

    @Test func presignatureConcurrentUseYieldsOneShare() async throws {
        var rng = DeterministicRandom(seed: 72)
        let shares = try keyshares(2, 2, seed: 73)
        let p0 = FROST.Presignature(keyshare: shares[0], using: &rng)
        let p1 = FROST.Presignature(keyshare: shares[1], using: &rng)
        let successes = await withTaskGroup(of: Bool.self) { group in
            for k in 0..<8 {
                group.addTask {
                    guard var s = try? FROST.SigningSession(keyshare: shares[0], signers: [0, 1], message: [UInt8(k)], presignature: p0),
                          (try? s.receiveRound1(p1.round1Message, from: 1)) != nil else { return false }
                    return (try? s.round2()) != nil
                }
            }
            var count = 0
            for await ok in group where ok { count += 1 }
            return count
        }
        #expect(successes == 1)
    }

    @Test func dkgRound1() throws {
        var rng = DeterministicRandom(seed: 80)
        let sessionId = FROST.randomBytes(32, using: &rng)
        var me = try FROST.KeyGeneration(party: 0, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen, using: &rng)
        let peer = try FROST.KeyGeneration(party: 1, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen, using: &rng)
        let good = peer.round1Message
        #expect(good.count == FROST.KeyGeneration.round1Size(threshold: 2, keygen: true))
        let malformed = ProtocolError.abort(party: 1, reason: .malformedMessage)
        #expect(throws: malformed) { try me.receiveRound1(Array(good.dropLast()), from: 1) }
        #expect(throws: malformed) { try me.receiveRound1(good + [0], from: 1) }
        for bad in Self.badPoints {
            for offset in [0, 32, 64] {   // φ_0, φ_1, R
                var m = good
                m.replaceSubrange(offset..<offset + 32, with: bad)
                #expect(throws: malformed) { try me.receiveRound1(m, from: 1) }
            }
        }
        // A proof for another party, or for another session, or a tampered μ.
        var tampered = good
        tampered[96] ^= 1
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidProof)) { try me.receiveRound1(tampered, from: 1) }
        #expect(throws: ProtocolError.abort(party: 2, reason: .invalidProof)) { try me.receiveRound1(good, from: 2) }
        let otherSession = try FROST.KeyGeneration(party: 1, threshold: 2, parties: 3, sessionId: [UInt8](repeating: 7, count: 32),
                                                   mode: .keygen, using: &rng)
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidProof)) { try me.receiveRound1(otherSession.round1Message, from: 1) }
        #expect(throws: ProtocolError.abort(party: 3, reason: .unexpectedSender)) { try me.receiveRound1(good, from: 3) }
        #expect(throws: ProtocolError.abort(party: 0, reason: .unexpectedSender)) { try me.receiveRound1(good, from: 0) }
        #expect(throws: ProtocolError.abort(party: 1, reason: .unexpectedRound)) { try me.receiveRound2([UInt8](repeating: 0, count: 96), from: 1) }
        #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) { try me.round2Messages() }
        try me.receiveRound1(good, from: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .duplicateMessage)) { try me.receiveRound1(good, from: 1) }
    }

    @Test func dkgRound2() throws {
        var rng = DeterministicRandom(seed: 90)
        let sessionId = FROST.randomBytes(32, using: &rng)
        var m = try (0..<3).map { try FROST.KeyGeneration(party: $0, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen, using: &rng) }
        for i in 0..<3 { for j in 0..<3 where i != j { try m[j].receiveRound1(m[i].round1Message, from: PartyIndex(i)) } }
        let out = try m.map { try $0.round2Messages() }
        let good = try #require(out[1][0])
        #expect(good.count == 96)
        let malformed = ProtocolError.abort(party: 1, reason: .malformedMessage)
        #expect(throws: malformed) { try m[0].receiveRound2(Array(good.dropLast()), from: 1) }
        #expect(throws: malformed) { try m[0].receiveRound2(good + [0], from: 1) }
        var nonCanonical = good
        nonCanonical.replaceSubrange(32..<64, with: try Hex.decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010"))
        #expect(throws: malformed) { try m[0].receiveRound2(nonCanonical, from: 1) }
        // The share meant for party 2 (fails the Feldman check at party 0), or a modified share.
        var wrongShare = good
        wrongShare.replaceSubrange(32..<64, with: try #require(out[1][2])[32..<64])
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidShare)) { try m[0].receiveRound2(wrongShare, from: 1) }
        // A chain-code contribution that does not open the commitment.
        var wrongChainCode = good
        wrongChainCode[95] ^= 1
        #expect(throws: ProtocolError.abort(party: 1, reason: .commitmentMismatch)) { try m[0].receiveRound2(wrongChainCode, from: 1) }
        // A different round-1 view (three parties: nobody can be named).
        var wrongEcho = good
        wrongEcho[0] ^= 1
        #expect(throws: ProtocolError.abort(party: nil, reason: .transcriptMismatch)) { try m[0].receiveRound2(wrongEcho, from: 1) }
        #expect(throws: ProtocolError.abort(party: 5, reason: .unexpectedSender)) { try m[0].receiveRound2(good, from: 5) }
        #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) { try m[0].finish() }
        // Still accepts the good messages and finishes.
        try m[0].receiveRound2(good, from: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .duplicateMessage)) { try m[0].receiveRound2(good, from: 1) }
        try m[0].receiveRound2(try #require(out[2][0]), from: 2)
        let share = try m[0].finish()
        #expect(share.party == 0)
        #expect(!m[0].description.contains(Hex.encode(share.secretShare.bytes)))
    }

    @Test func refreshAndImportRejectBadMessages() throws {
        var rng = DeterministicRandom(seed: 100)
        let shares = try keyshares(2, 2, seed: 101)
        let sessionId = FROST.randomBytes(32, using: &rng)
        var a = try FROST.KeyGeneration(party: 0, threshold: 2, parties: 2, sessionId: sessionId, mode: .refresh(shares[0]), using: &rng)
        var b = try FROST.KeyGeneration(party: 1, threshold: 2, parties: 2, sessionId: sessionId, mode: .refresh(shares[1]), using: &rng)
        #expect(a.round1Message.count == 32)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { try a.receiveRound1(Self.smallOrder, from: 1) }
        try a.receiveRound1(b.round1Message, from: 1)
        try b.receiveRound1(a.round1Message, from: 0)
        var good = try #require(try b.round2Messages()[0])
        #expect(good.count == 64)
        good[63] ^= 1
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidShare)) { try a.receiveRound2(good, from: 1) }
        var echo = try #require(try b.round2Messages()[0])
        echo[0] ^= 1
        #expect(throws: ProtocolError.abort(party: 1, reason: .transcriptMismatch)) { try a.receiveRound2(echo, from: 1) }
        // A refresh keyshare of another party is the caller's error.
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) {
            try FROST.KeyGeneration(party: 0, threshold: 2, parties: 2, sessionId: sessionId, mode: .refresh(shares[1]), using: &rng)
        }
        // Import: an importer whose polynomial does not start at the announced key fails its shares.
        let x = Ed25519.Scalar.random(using: &rng)
        let cc = [UInt8](repeating: 3, count: 32)
        let announced = try FROST.ImportedKey(importer: 1, publicKey: Ed25519.Point(base: x), chainCode: cc)
        let cheating = try FROST.ImportedKey(importer: 1, publicKey: Ed25519.Point(base: x + .one), chainCode: cc, secret: x + .one)
        var receiver = try FROST.KeyGeneration(party: 0, threshold: 2, parties: 2, sessionId: sessionId, mode: .importKey(announced), using: &rng)
        var importer = try FROST.KeyGeneration(party: 1, threshold: 2, parties: 2, sessionId: sessionId, mode: .importKey(cheating), using: &rng)
        try receiver.receiveRound1(importer.round1Message, from: 1)
        try importer.receiveRound1(receiver.round1Message, from: 0)
        // The contexts differ (the announced key is bound), so the echo already differs.
        #expect(throws: ProtocolError.abort(party: 1, reason: .transcriptMismatch)) {
            try receiver.receiveRound2(try #require(try importer.round2Messages()[0]), from: 1)
        }
    }
}
