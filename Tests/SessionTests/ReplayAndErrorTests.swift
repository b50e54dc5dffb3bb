import MPCCrypto
import MPCProtocols
import Testing
@testable import CloudNode
@testable import SilentShardCore

@Suite("Replay window and session errors")
struct ReplayAndErrorTests {
    @Test func windowBounds() throws {
        #expect(throws: SessionError.invalidConfiguration(.timestampWindow)) { try ReplayWindow(windowMilliseconds: 29_999) }
        #expect(throws: SessionError.invalidConfiguration(.timestampWindow)) { try ReplayWindow(windowMilliseconds: 600_001) }
        let w = try ReplayWindow(windowMilliseconds: 30_000)
        #expect(w.retentionMilliseconds == 180_000)
        #expect(w.isFresh(timestamp: 1_000_000, now: 1_030_000))
        #expect(!w.isFresh(timestamp: 1_000_000, now: 1_030_001))
        #expect(w.isFresh(timestamp: 1_030_000, now: 1_000_000))
        #expect(!w.isFresh(timestamp: .max, now: 0) && !w.isFresh(timestamp: 0, now: .max))
        #expect(throws: SessionError.detected(.staleTimestamp, blamed: nil)) { try w.checkFresh(timestamp: 0, now: 1_000_000) }
    }

    @Test func replayStore() throws {
        var w = try ReplayWindow()   // 120 s window, retention 360 s
        let a = InstanceID.random(), b = InstanceID.random()
        let t: UInt64 = 1_000_000_000
        try w.insert(a, now: t)
        #expect(throws: SessionError.detected(.replay, blamed: nil)) { try w.insert(a, now: t + 1) }
        try w.insert(b, now: t + 1)
        #expect(w.contains(a, now: t + 359_999) && !w.contains(a, now: t + 360_000))
        // Still a replay just before retention ends; a SETUP that old is already stale (360 s > 120 s).
        #expect(throws: SessionError.self) { try w.insert(a, now: t + 359_999) }
        try w.insert(a, now: t + 360_000)
        w.prune(now: t + 1_000_000)
        #expect(w.count == 0)
        // Many entries: pruning keeps the store at one retention's worth.
        for i in 0..<5_000 { try w.insert(InstanceID.random(), now: t + 2_000_000 + UInt64(i) * 1_000) }
        #expect(w.count <= 361)
        try w.insert(a, now: .max)    // no overflow
        #expect(w.contains(a, now: .max - 1))
    }

    @Test("a REJECT's retry_after_s reaches the app: rateLimited / serviceUnavailable(retryAfter:), signed or not")
    func retryAfterMapping() {
        let node = Ed25519.SigningKey()
        let setupHash = SetupHash.random()
        func appError(_ code: WireCode, retryAfter: UInt32, trusted: Bool = true) -> (SessionError, SilentShardError) {
            let payload = RejectPayload(code: code, retryAfterSeconds: retryAfter, setupHash: setupHash, nodeKey: node.verifyingKey)
            let frame = payload.frame(sender: 1, instanceID: InstanceID?.none, nodeSigningKey: node)
            let session = payload.sessionError(frame: frame, trustedNodeKey: trusted ? node.verifyingKey : nil,
                                               expectedSetupHash: setupHash, expectedInstanceID: InstanceID.random())
            return (session, SilentShardError(session))
        }
        #expect(appError(.rateLimited, retryAfter: 42).0 == .retryLater(.rateLimited, afterSeconds: 42, by: 1, authenticated: true))
        #expect(appError(.rateLimited, retryAfter: 42).1 == .rateLimited(retryAfter: 42))
        #expect(appError(.overloaded, retryAfter: 30).1 == .serviceUnavailable(retryAfter: 30))
        #expect(appError(.keyBusy, retryAfter: 5).1 == .keyBusy)
        // Unauthenticated: still reported (flagged), the delay kept as advice.
        #expect(appError(.rateLimited, retryAfter: 9, trusted: false).0
            == .retryLater(.rateLimited, afterSeconds: 9, by: 1, authenticated: false))
        // Without retry_after_s nothing changes.
        #expect(appError(.rateLimited, retryAfter: 0).1 == .rateLimited(retryAfter: nil))
        #expect(appError(.rateLimited, retryAfter: 0).0 == .reported(.rateLimited, by: 1, blamed: nil, authenticated: true))
        // A code this version does not know keeps its number.
        let unknown = WireCode(rawValue: 0x02F0)
        #expect(appError(unknown, retryAfter: 3).1 == .rejected(code: 0x02F0, name: unknown.name, by: .node(1), authenticated: true))
        #expect(appError(.rateLimited, retryAfter: 42).0.retry == WireCode.rateLimited.retry)
        #expect(appError(.rateLimited, retryAfter: 42).0.blamedParty == nil)
    }

    @Test func protocolErrorMapping() {
        #expect(SessionError(ProtocolError.abort(party: 1, reason: .invalidProof)) == .detected(.abort, blamed: 1))
        let ban = SessionError(ProtocolError.abortAndBan(party: 2, reason: .otConsistencyCheckFailed))
        #expect(ban == .detected(.abortAndBan, blamed: 2) && ban.requiresBan)
        #expect(SessionError(ProtocolError.signingFailed(party: nil, reason: .invalidSignature)) == .detected(.signatureFailed, blamed: nil))
        #expect(SessionError(ProtocolError.invalidInput(.invalidDerivationPath)) == .detected(.invalidParameter, blamed: nil))
        // A reported AbortAndBan never makes us ban.
        #expect(!SessionError.reported(.abortAndBan, by: 1, blamed: 0, authenticated: true).requiresBan)
    }

    @Test func wireCodes() {
        // Session version 1's 43 codes, KEY_RETIRED (spec proposal P7) and NODE_BEHIND (second review finding 1).
        #expect(WireCode.known.count == 45)
        #expect(Set(WireCode.known.values).count == 45)
        #expect(WireCode.keyRetired.name == "KEY_RETIRED" && WireCode.keyRetired.retry == .no)
        #expect(WireCode.nodeBehind.name == "NODE_BEHIND" && WireCode.nodeBehind.retry == .no)
        #expect(SilentShardError(SessionError.reported(.nodeBehind, by: 1, blamed: nil, authenticated: true)) == .nodeBehind(keyId: nil))
        // Its detail: parent key id and path, strictly decoded; the path shown as text.
        let detail = KeyRetiredDetail(parentKeyID: KeyID(checked: [UInt8](repeating: 7, count: 32)),
                                      path: DerivationPathBytes(indices: [0x8000_002C, 0x8000_003C, 0, 5]).encoded)
        #expect((try? KeyRetiredDetail(bytes: detail.encoded)) == detail && detail.pathText == "m/44'/60'/0/5")
        #expect(throws: SessionError.self) { try KeyRetiredDetail(bytes: [UInt8](repeating: 7, count: 32)) }
        #expect(throws: SessionError.self) { try KeyRetiredDetail(bytes: detail.encoded + [0]) }
        #expect(WireCode.staleGeneration.retry == .reconcile && WireCode.keyBusy.retry == .delay)
        #expect(WireCode.forbidden.retry == .no && WireCode.sequence.retry == .newSession)
        #expect(WireCode(rawValue: 0x01FF).retry == .newSession && WireCode(rawValue: 0x05AA).retry == .newSession)
        #expect(WireCode(rawValue: 0x02FF).retry == .no && WireCode(rawValue: 0x06FF).retry == .delay)
        #expect(WireCode(rawValue: 0x0AFF).errorClass == .unknown && WireCode(rawValue: 0x0AFF).retry == .no)
        #expect(WireCode(rawValue: 0x0199).name == "UNKNOWN_0x199")
        #expect(SessionError.detected(.malformed, blamed: 1).description == "session error MALFORMED (blamed party 1)")
        #expect(SessionError.reported(.replay, by: 2, blamed: nil, authenticated: false).description.contains("unauthenticated"))
    }
}
