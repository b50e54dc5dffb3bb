import MPCCrypto
import MPCProtocols
import Testing
@testable import SilentShardCore

@Suite("Session P2P encryption and sequencing")
struct PointToPointTests {
    let id = InstanceID.random()
    let setupHash = SetupHash.random()
    let app = SessionKeyPair()
    let node = SessionKeyPair()

    func channels() throws -> (PointToPointChannel, PointToPointChannel) {
        (try PointToPointChannel(local: 0, localKey: app.agreementKey, peer: 1, peerKey: node.agreementKey.publicKey, setupHash: setupHash),
         try PointToPointChannel(local: 1, localKey: node.agreementKey, peer: 0, peerKey: app.agreementKey.publicKey, setupHash: setupHash))
    }

    @Test func bothDirections() throws {
        let (a, n) = try channels()
        let m1: [UInt8] = Array("app to node".utf8)
        let f1 = try a.seal(m1, tag: 0x0102, seq: 0, instanceID: id)
        #expect(f1.header.length == UInt32(m1.count) && f1.body.count == m1.count + 16)
        #expect(try n.open(f1) == m1)
        let f2 = try n.seal([1, 2, 3], tag: 0x0102, seq: 0, instanceID: id)
        #expect(try a.open(f2) == [1, 2, 3])
        // Same plaintext, same seq, opposite directions: different ciphertexts (different keys).
        let g1 = try a.seal([5], tag: 0x1102, seq: 4, instanceID: id)
        let g2 = try n.seal([5], tag: 0x1102, seq: 4, instanceID: id)
        #expect(g1.body != g2.body)
        // Through the wire codec.
        #expect(try n.open(try Frame.parseSingle(f1.encoded())) == m1)
    }

    @Test func keySeparationAndTampering() throws {
        let (a, n) = try channels()
        let frame = try a.seal([1, 2, 3, 4], tag: 0x0102, seq: 2, instanceID: id)
        // Wrong direction: the sender cannot open its own frame.
        #expect(throws: SessionError.detected(.badAuthenticator, blamed: nil)) { try a.open(frame) }
        func reframe(_ edit: (inout FrameHeader) -> Void) -> Frame {
            var h = frame.header
            edit(&h)
            return Frame(header: h, sealed: frame.body)
        }
        for bad in [reframe { $0.seq = 3 }, reframe { $0.tag = 0x0202 }, reframe { $0.instanceID = InstanceID.random() },
                    reframe { $0.receiver = 2 }, reframe { $0.sender = 2 }] {
            #expect(throws: SessionError.self) { try n.open(bad) }
        }
        var body = frame.body; body[0] ^= 1
        #expect(throws: SessionError.self) { try n.open(Frame(header: frame.header, sealed: body)) }
        // Another session (setup_hash) or another peer key: other keys.
        let other = try PointToPointChannel(local: 1, localKey: node.agreementKey, peer: 0, peerKey: app.agreementKey.publicKey,
                                            setupHash: SetupHash.random())
        #expect(throws: SessionError.self) { try other.open(frame) }
        let third = try PointToPointChannel(local: 1, localKey: X25519.PrivateKey(), peer: 0, peerKey: app.agreementKey.publicKey,
                                            setupHash: setupHash)
        #expect(throws: SessionError.self) { try third.open(frame) }
    }

    @Test func weakPeerKeyIsBadAuthenticator() throws {
        let zero = try X25519.PublicKey(bytes: [UInt8](repeating: 0, count: 32))
        #expect(throws: SessionError.detected(.badAuthenticator, blamed: nil)) {
            try PointToPointChannel(local: 0, localKey: app.agreementKey, peer: 1, peerKey: zero, setupHash: setupHash)
        }
        #expect(throws: SessionError.self) {
            try PointToPointChannel(local: 1, localKey: app.agreementKey, peer: 1, peerKey: node.agreementKey.publicKey, setupHash: setupHash)
        }
    }

    @Test func keyDerivationMatchesSpec() throws {
        // k_{0→1} recomputed from session.md §3.3 opens a frame sealed by the channel.
        let (a, _) = try channels()
        let frame = try a.seal([7, 7], tag: 0x0102, seq: 9, instanceID: id)
        let ss = try app.agreementKey.sharedSecret(with: node.agreementKey.publicKey)
        let key = SessionHash.hash("p2p", setupHash.bytes, [0], [1], app.agreementKey.publicKey.bytes,
                                   node.agreementKey.publicKey.bytes, ss)
        let nonce: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9]
        let aad = Array("SilentShard/v3/p2p".utf8) + [0] + frame.header.encoded()
        #expect(try ChaCha20Poly1305.open(frame.body, key: key, nonce: nonce, associatedData: aad) == [7, 7])
    }

    @Test func sequencing() throws {
        var incoming = IncomingSequencer()
        let s = StreamID(sender: 1, receiver: 0xFF)
        let p = StreamID(sender: 1, receiver: 0)
        try incoming.check(s, seq: 0)
        #expect(throws: SessionError.detected(.sequence, blamed: nil)) { try incoming.check(s, seq: 1) }   // gap
        incoming.advance(s)
        #expect(throws: SessionError.self) { try incoming.check(s, seq: 0) }                             // duplicate
        try incoming.check(s, seq: 1)
        try incoming.check(p, seq: 0)                                                                     // streams independent
        #expect(incoming.expected(p) == 0 && incoming.expected(s) == 1)
        var outgoing = OutgoingSequencer(sender: 0)
        #expect(outgoing.assign(receiver: 0xFF) == 0)
        #expect(outgoing.assign(receiver: 0xFF) == 1)
        #expect(outgoing.assign(receiver: 1) == 0)
        #expect(outgoing.assign(receiver: 0xFF) == 2)
    }
}

@Suite("preSignFinal keys and FINAL frames (session.md §8.1, §8.4)")
struct PreSignFinalTests {
    @Test func requestAndResponse() throws {
        let app = X25519.PrivateKey(), signer = X25519.PrivateKey()
        let setupHash = SetupHash.random(), presig = InstanceID.random()
        let appKeys = try PreSignFinalKeys(local: 0, localKey: app, peer: 2, peerKey: signer.publicKey, setupHash: setupHash)
        let nodeKeys = try PreSignFinalKeys(local: 2, localKey: signer, peer: 0, peerKey: app.publicKey, setupHash: setupHash)
        #expect(appKeys.storedKeys == nodeKeys.storedKeys && appKeys.signer == 2)
        #expect(appKeys.storedKeys.request != appKeys.storedKeys.response)
        let message = [UInt8](repeating: 0xAB, count: 32), finish = [UInt8](repeating: 1, count: 128)
        let request = try appKeys.request(presigID: presig, message: message, finish: finish)
        #expect(request.header.kind == .finalRequest && request.header.receiver == 2 && request.header.tag == 0x1301)
        #expect(request.header.instanceID == presig && request.nonce.count == 24)
        let parsed = try Frame.parseSingle(request.encoded())
        let opened = try nodeKeys.openRequest(parsed)
        #expect(opened.message == message && opened.finish == finish)
        let response = try nodeKeys.response(presigID: presig, finish: [7, 7, 7])
        #expect(try appKeys.openResponse(try Frame.parseSingle(response.encoded())) == [7, 7, 7])
        // Direction separation: a response is no request, the app cannot open its own request as a response.
        #expect(throws: SessionError.self) { try nodeKeys.openRequest(response) }
        #expect(throws: SessionError.self) { try appKeys.openResponse(request) }
        // Tampering with the header (presig id) or nonce fails.
        var header = request.header; header.instanceID = InstanceID.random()
        #expect(throws: SessionError.self) { try nodeKeys.openRequest(Frame(header: header, nonce: request.nonce, sealed: request.body)) }
        var nonce = request.nonce; nonce[0] ^= 1
        #expect(throws: SessionError.self) { try nodeKeys.openRequest(Frame(header: request.header, nonce: nonce, sealed: request.body)) }
        // Restored keys behave the same; the spec's formula reproduces kf_{0→X}.
        let restored = try PreSignFinalKeys(signer: 2, requestKey: appKeys.storedKeys.request, responseKey: appKeys.storedKeys.response)
        #expect(try restored.openResponse(response) == [7, 7, 7])
        let ss = try app.sharedSecret(with: signer.publicKey)
        #expect(appKeys.storedKeys.request == SessionHash.hash("final", setupHash.bytes, [0], [2], app.publicKey.bytes, signer.publicKey.bytes, ss))
        #expect(throws: SessionError.self) { try PreSignFinalKeys(local: 1, localKey: app, peer: 2, peerKey: signer.publicKey, setupHash: setupHash) }
    }
}
