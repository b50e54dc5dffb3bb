import MPCCrypto
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// FROST key generation as round states (`FROST.KeyGeneration.start`, `Round1State.round2`,
/// `Round2State.finish`) and the repair's wire format (`FROST.Repair.PublicKeyInfo`).
@Suite("FROST key generation rounds")
struct FROSTKeyGenerationRoundsTests {
    /// Every party through the round states; `tamper` may rewrite each round-1 broadcast.
    static func run(t: UInt8, n: UInt8, seed: UInt64,
                    tamper: (ProtocolMessage) -> ProtocolMessage = { $0 }) throws(ProtocolError) -> [FROST.Keyshare] {
        var rng = DeterministicRandom(seed: seed)
        let sessionId = FROST.randomBytes(32, using: &rng)
        var round1: [FROST.KeyGeneration.Round1State] = []
        var broadcasts: [ProtocolMessage] = []
        for i in 0..<n {
            let (state, out) = try FROST.KeyGeneration.start(party: i, threshold: t, parties: n, sessionId: sessionId,
                                                             mode: .keygen, using: &rng)
            round1.append(state)
            broadcasts += out.map(tamper)
        }
        var round2: [FROST.KeyGeneration.Round2State] = []
        var direct: [ProtocolMessage] = []
        for state in round1 {
            let (next, out) = try state.round2(broadcasts.filter { $0.from != state.party })
            round2.append(next)
            direct += out
        }
        var shares: [FROST.Keyshare] = []
        for state in round2 { shares.append(try state.finish(direct.filter { $0.to == state.party })) }
        return shares
    }

    @Test(arguments: [(UInt8(2), UInt8(2)), (2, 3), (3, 5)])
    func roundStatesMakeOneKey(t: UInt8, n: UInt8) throws {
        let shares = try Self.run(t: t, n: n, seed: 300 + UInt64(n))
        #expect(shares.count == Int(n))
        #expect(Set(shares.map(\.publicKey.bytes)).count == 1)
        #expect(Set(shares.map(\.generation)).count == 1)
        var rng = DeterministicRandom(seed: 1)
        let message = Array("rounds".utf8)
        let signature = try FROST.LocalRun.sign(shares, signers: Array(0..<t), message: message, using: &rng)
        let key = try Ed25519.VerifyingKey(bytes: shares[0].publicKey.bytes)
        #expect(key.isValidSignature(signature, for: message))
    }

    /// The same seed gives the same messages through the round states as through the per-message API.
    @Test func roundStatesSendWhatThePerMessageAPISends() throws {
        var a = DeterministicRandom(seed: 9), b = DeterministicRandom(seed: 9)
        let sessionId = [UInt8](repeating: 3, count: 32)
        let (state, out) = try FROST.KeyGeneration.start(party: 1, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen,
                                                         using: &a)
        let machine = try FROST.KeyGeneration(party: 1, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen, using: &b)
        #expect(out == [ProtocolMessage(tag: FROST.MessageTag.dkgRound1.rawValue, from: 1, to: nil, payload: machine.round1Message)])
        #expect(state.broadcast == out[0])
    }

    /// A bad round-1 broadcast is its sender's abort, raised by the round that consumes it.
    @Test func badRound1IsItsSendersAbort() {
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            _ = try Self.run(t: 2, n: 3, seed: 5) { message in
                guard message.from == 1 else { return message }
                return ProtocolMessage(tag: message.tag, from: message.from, to: nil, payload: Array(message.payload.dropLast()))
            }
        }
    }

    /// A round missing a peer's message ends with `missingMessages`, not a share.
    @Test func missingRound1IsRefused() throws {
        var rng = DeterministicRandom(seed: 6)
        let sessionId = [UInt8](repeating: 4, count: 32)
        let (state, _) = try FROST.KeyGeneration.start(party: 0, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen,
                                                       using: &rng)
        let (_, peer) = try FROST.KeyGeneration.start(party: 1, threshold: 2, parties: 3, sessionId: sessionId, mode: .keygen,
                                                      using: &rng)
        #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) { _ = try state.round2(peer) }
    }

    @Test func repairPublicKeyInfoRoundTrips() throws {
        let shares = try Self.run(t: 2, n: 3, seed: 7)
        let info = FROST.Repair.PublicKeyInfo(keyshare: shares[1])
        let bytes = info.encoded
        #expect(bytes.count == 35 + shares[1].generation.count + 32 + 32 * 3)
        #expect(try FROST.Repair.PublicKeyInfo(bytes: bytes, from: 1) == info)
        #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) {
            _ = try FROST.Repair.PublicKeyInfo(bytes: Array(bytes.dropLast()), from: 2)
        }
        var badPoint = bytes
        badPoint.replaceSubrange(2..<34, with: [UInt8](repeating: 0xFF, count: 32))
        #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) {
            _ = try FROST.Repair.PublicKeyInfo(bytes: badPoint, from: 2)
        }
    }
}
