import MPCCrypto
import MPCProtocols
import Testing
@testable import SilentShardCore

@Suite("Receive procedure (session.md §3.5)")
struct FrameReceiverTests {
    /// A duo or trio session seen from the app: the app's SETUP, node session keys, a receiver.
    struct AppSession {
        let cluster: Cluster
        let appKeys = SessionKeyPair()
        let nodeKeys: [PartyIndex: SessionKeyPair] = [1: SessionKeyPair(), 2: SessionKeyPair()]
        let setup: Frame
        let payload: SetupPayload
        var receiver: FrameReceiver
        var id: InstanceID { setup.header.instanceID }
        var setupHash: SetupHash { receiver.setupHash }

        init(mode: SessionMode, operation: SessionOperation = .keygen, algorithm: SessionAlgorithm = .ecdsa) async throws {
            cluster = Cluster(mode: mode)
            payload = try cluster.setupPayload(operation, algorithm: algorithm, appKeys: appKeys)
            setup = try await cluster.setupFrame(payload)
            receiver = try FrameReceiver(local: 0, setupFrame: setup, setup: payload, localKeys: appKeys, trust: cluster.trust)
        }

        func accept(_ party: PartyIndex) -> Frame {
            cluster.accept(from: party, setupHash: setupHash, instanceID: id, keys: nodeKeys[party] ?? SessionKeyPair())
        }

        func nodeChannel(_ party: PartyIndex) throws -> PointToPointChannel {
            try PointToPointChannel(local: party, localKey: (nodeKeys[party] ?? SessionKeyPair()).agreementKey, peer: 0,
                                    peerKey: appKeys.agreementKey.publicKey, setupHash: setupHash)
        }

        func bcast(_ party: PartyIndex, tag: UInt16 = 0x0101, seq: UInt32, payload: [UInt8] = [1, 2, 3]) -> Frame {
            sessionFrame(.broadcast, from: party, tag: tag, seq: seq, payload: payload, instanceID: id,
                         keys: nodeKeys[party] ?? SessionKeyPair())
        }
    }

    func code(_ body: () throws -> Void) -> WireCode? {
        do { try body(); return nil } catch { return (error as? SessionError)?.code ?? .internalError }
    }

    @Test func duoHappyPath() async throws {
        var s = try await AppSession(mode: .duo)
        let t0 = s.receiver.transcript.digest
        let accepted = try s.receiver.receive(s.accept(1), link: [1])
        #expect(accepted.disposition == .consume && s.receiver.hasOpened(1))
        let b = try s.receiver.receive(s.bcast(1, seq: 1), link: [1])
        #expect(b.payload == [1, 2, 3])
        let p2p = try s.nodeChannel(1).seal([9, 8, 7], tag: 0x0102, seq: 0, instanceID: s.id)
        #expect(try s.receiver.receive(p2p, link: [1]).payload == [9, 8, 7])
        // The app's own channel talks to the node's.
        guard let channel = s.receiver.channel(to: 1) else { Issue.record("no channel"); return }
        let out = try channel.seal([4], tag: 0x0102, seq: 0, instanceID: s.id)
        #expect(try s.nodeChannel(1).open(out) == [4])
        #expect(s.receiver.transcript.count == 3 && s.receiver.transcript.digest != t0)   // SETUP, ACCEPT, BCAST
        let p2 = try s.nodeChannel(1).seal([1], tag: 0x1102, seq: 1, instanceID: s.id)
        _ = try s.receiver.receive(p2, link: [1])
        let outcome = sessionFrame(.outcome, from: 1, to: 0, seq: 2,
                                   payload: OutcomePayload(keyID: KeyID(checked: [UInt8](repeating: 0, count: 32)), gen: Generation(checked: [UInt8](repeating: 0, count: 32)),
                                                           digest: [UInt8](repeating: 0, count: 32), outcome: .committed, currentGen: nil).encoded,
                                   instanceID: s.id, keys: s.nodeKeys[1] ?? SessionKeyPair())
        #expect(try s.receiver.receive(outcome, link: [1]).header.kind == .outcome)
    }

    /// Each failing frame yields its code and leaves the receiver exactly as it was.
    @Test func rejectionsChangeNoState() async throws {
        var s = try await AppSession(mode: .duo)
        _ = try s.receiver.receive(s.accept(1), link: [1])
        let before = s.receiver
        func check(_ frame: Frame, link: Set<PartyIndex> = [1], expected: WireCode,
                   isExpected: @escaping (FrameHeader) -> Bool = { _ in true }) {
            var r = s.receiver
            #expect(code { _ = try r.receive(frame, link: link, isExpected: isExpected) } == expected)
            #expect(r.transcript == before.transcript)
            #expect(code { _ = try r.receive(s.bcast(1, seq: 1), link: [1]) } == nil)   // stream not advanced
        }
        // 1. kind contradicts tag / unknown tag
        check(s.bcast(1, tag: 0x0102, seq: 1), expected: .malformed)
        check(s.bcast(1, tag: 0x7777, seq: 1), expected: .malformed)
        // 2. binding
        let otherSession = sessionFrame(.broadcast, from: 1, tag: 0x0101, seq: 1, payload: [1], instanceID: InstanceID.random(),
                                        keys: s.nodeKeys[1] ?? SessionKeyPair())
        check(otherSession, expected: .unexpected)
        check(s.bcast(1, seq: 1), link: [2], expected: .unexpected)                       // not possible on this link
        check(sessionFrame(.broadcast, from: 0, tag: 0x0101, seq: 1, payload: [1], instanceID: s.id, keys: s.appKeys),
              link: [0, 1], expected: .unexpected)                                         // from self
        check(sessionFrame(.broadcast, from: 2, tag: 0x0101, seq: 0, payload: [1], instanceID: s.id, keys: SessionKeyPair()),
              link: [1, 2], expected: .unexpected)                                         // not a participant (duo)
        let notForMe = try s.nodeChannel(1).seal([1], tag: 0x0102, seq: 0, instanceID: s.id)
        let wrongReceiver = Frame(header: FrameHeader(kind: .pointToPoint, sender: 1, receiver: 2, tag: 0x0102, seq: 0,
                                                      length: 1, instanceID: s.id), sealed: notForMe.body)
        check(wrongReceiver, expected: .unexpected)
        // 3. state: rejected by the session state machine, duplicate ACCEPT
        check(s.bcast(1, seq: 1), expected: .unexpected, isExpected: { _ in false })
        check(s.accept(1), expected: .unexpected)
        // 4. sequence: gap
        check(s.bcast(1, seq: 2), expected: .sequence)
        check(try s.nodeChannel(1).seal([1], tag: 0x0102, seq: 1, instanceID: s.id), expected: .sequence)
        // 5. authentication: wrong session key, tampered ciphertext
        check(sessionFrame(.broadcast, from: 1, tag: 0x0101, seq: 1, payload: [1], instanceID: s.id, keys: SessionKeyPair()),
              expected: .badAuthenticator)
        let p2p = try s.nodeChannel(1).seal([1, 2], tag: 0x0102, seq: 0, instanceID: s.id)
        var body = p2p.body; body[1] ^= 0x40
        check(Frame(header: p2p.header, sealed: body), expected: .badAuthenticator)
        // Kinds handled elsewhere.
        check(Frame.signed(header: FrameHeader(kind: .exportResponse, sender: 1, receiver: 0, length: 1, instanceID: s.id),
                           payload: [1], key: s.cluster.cloudKey), expected: .unexpected)
    }

    @Test func duplicatesAndOrdering() async throws {
        var s = try await AppSession(mode: .duo)
        // A node's frame before its ACCEPT is UNEXPECTED.
        #expect(code { _ = try s.receiver.receive(s.bcast(1, seq: 1), link: [1]) } == .unexpected)
        _ = try s.receiver.receive(s.accept(1), link: [1])
        let frame = s.bcast(1, seq: 1)
        _ = try s.receiver.receive(frame, link: [1])
        // The same (sender, kind, tag, receiver) again is UNEXPECTED, even with the next seq.
        #expect(code { _ = try s.receiver.receive(frame, link: [1]) } == .unexpected)
        #expect(code { _ = try s.receiver.receive(s.bcast(1, seq: 2), link: [1]) } == .unexpected)
        // Reordering: seq 3 before seq 2.
        #expect(code { _ = try s.receiver.receive(s.bcast(1, tag: 0x0301, seq: 3), link: [1]) } == .sequence)
        _ = try s.receiver.receive(s.bcast(1, tag: 0x0201, seq: 2), link: [1])
        _ = try s.receiver.receive(s.bcast(1, tag: 0x0301, seq: 3), link: [1])
    }

    @Test func acceptVerification() async throws {
        for mode in SessionMode.allCases {
            let s = try await AppSession(mode: mode)
            func failure(_ frame: Frame) -> SessionError? {
                var r = s.receiver
                do { _ = try r.receive(frame, link: [1, 2]); return nil } catch { return error }
            }
            #expect(failure(s.accept(1)) == nil)
            // Wrong setup_hash.
            let wrongHash = s.cluster.accept(from: 1, setupHash: SetupHash.random(), instanceID: s.id, keys: SessionKeyPair())
            #expect(failure(wrongHash) == .cloudVerificationFailed(.setupHashMismatch))
            // Signed by a key that is not trusted / signature broken.
            let rogue = Ed25519.SigningKey()
            let payload = AcceptPayload(setupHash: s.setupHash, nodeKey: rogue.verifyingKey, certificate: nil,
                                        sessionKeys: SessionKeyPair().publicKeys, nodeTime: nil, keyStatus: nil).encoded()
            let header = FrameHeader(kind: .accept, sender: 1, receiver: 0xFF, length: UInt32(payload.count), instanceID: s.id)
            let rogueFrame = Frame.signed(header: header, payload: payload, key: rogue)
            #expect(failure(rogueFrame) == .cloudVerificationFailed(mode == .duo ? .nodeKeyMismatch : .certificateMissing))
            let good = s.accept(1)
            var signature = good.signature; signature[0] ^= 1
            #expect(failure(Frame(header: good.header, payload: good.body, signature: signature)) == .cloudVerificationFailed(.nodeSignature))
            if mode == .trio {
                // B's certificate presented by A: role mismatch.
                let swapped = s.cluster.accept(from: 2, setupHash: s.setupHash, instanceID: s.id, keys: SessionKeyPair())
                let parsed = try AcceptPayload(bytes: swapped.body)
                let reheader = FrameHeader(kind: .accept, sender: 1, receiver: 0xFF, length: swapped.header.length, instanceID: s.id)
                let asA = Frame.signed(header: reheader, payload: parsed.encoded(), key: s.cluster.nodeB)
                #expect(failure(asA) == .cloudVerificationFailed(.certificateRole))
            }
        }
    }

    @Test func weakNodeX25519KeyRecordsNothing() async throws {
        var s = try await AppSession(mode: .duo)
        let weak = SessionPublicKeys(signingKey: Ed25519.SigningKey().verifyingKey,
                                     agreementKey: try X25519.PublicKey(bytes: [UInt8](repeating: 0, count: 32)))
        let payload = AcceptPayload(setupHash: s.setupHash, nodeKey: s.cluster.cloudKey.verifyingKey, certificate: nil,
                                    sessionKeys: weak, nodeTime: nil, keyStatus: nil).encoded()
        let frame = Frame.signed(header: FrameHeader(kind: .accept, sender: 1, receiver: 0xFF, length: UInt32(payload.count),
                                                     instanceID: s.id), payload: payload, key: s.cluster.cloudKey)
        #expect(throws: SessionError.detected(.badAuthenticator, blamed: nil)) { _ = try s.receiver.receive(frame, link: [1]) }
        #expect(!s.receiver.hasOpened(1) && s.receiver.accepts.isEmpty)
        _ = try s.receiver.receive(s.accept(1), link: [1])   // a good ACCEPT still works afterwards
    }

    @Test func trioGroupAndDistinctKeys() async throws {
        var s = try await AppSession(mode: .trio)
        _ = try s.receiver.receive(s.accept(1), link: [1, 2])
        _ = try s.receiver.receive(s.accept(2), link: [1, 2])
        #expect(s.receiver.accepts.count == 2)
        // A B-certificate from another group is refused.
        var t = try await AppSession(mode: .trio)
        _ = try t.receiver.receive(t.accept(1), link: [1, 2])
        let otherGroup = NodeCertificate(role: .trioB, groupID: SecureRandom.bytes(count: 16), nodeKey: t.cluster.nodeB.verifyingKey,
                                         notBefore: Cluster.nowSeconds - 10, notAfter: Cluster.nowSeconds + 1000, serial: 9,
                                         issuer: t.cluster.cloudKey)
        let payload = AcceptPayload(setupHash: t.setupHash, nodeKey: t.cluster.nodeB.verifyingKey, certificate: otherGroup,
                                    sessionKeys: SessionKeyPair().publicKeys, nodeTime: nil, keyStatus: nil).encoded()
        let frame = Frame.signed(header: FrameHeader(kind: .accept, sender: 2, receiver: 0xFF, length: UInt32(payload.count), instanceID: t.id),
                                 payload: payload, key: t.cluster.nodeB)
        #expect(throws: SessionError.cloudVerificationFailed(.certificateGroupMismatch)) { _ = try t.receiver.receive(frame, link: [1, 2]) }
    }

    /// Security review 2, finding 12: a node's signed UNSUPPORTED_VERSION to an unparsable SETUP of *another*
    /// session (zero instance_id, zero setup_hash) replayed into this one must not count as authenticated — it
    /// is bound to no session, so it could otherwise drive a version downgrade anywhere.
    @Test func finding12_unboundSignedRejectIsUnauthenticatedInAnySession() async throws {
        for mode in [SessionMode.duo, .trio] {
            var s = try await AppSession(mode: mode)
            let key = s.cluster.nodeKey(1)
            let certificate = s.cluster.certificate(1)
            let captured = RejectPayload(code: .unsupportedVersion, setupHash: nil, nodeKey: key.verifyingKey,
                                         certificate: certificate, detail: [1, 1, 1, 3])
            let unbound = captured.frame(sender: 1, instanceID: InstanceID?.none, nodeSigningKey: key)
            #expect(throws: SessionError.reported(.unsupportedVersion, by: 1, blamed: nil, authenticated: false)) {
                _ = try s.receiver.receive(unbound, link: [1])
            }
            // Another session's instance_id: not bound either (the receiver refuses it outright).
            let other = captured.frame(sender: 1, instanceID: InstanceID.random(), nodeSigningKey: key)
            #expect(throws: SessionError.unexpected) { _ = try s.receiver.receive(other, link: [1]) }
            // Echoing this session's instance_id binds it.
            let echoed = captured.frame(sender: 1, instanceID: s.id, nodeSigningKey: key)
            #expect(throws: SessionError.reported(.unsupportedVersion, by: 1, blamed: nil, authenticated: true)) {
                _ = try s.receiver.receive(echoed, link: [1])
            }
        }
    }

    @Test func inSessionReject() async throws {
        var s = try await AppSession(mode: .duo)
        let reject = RejectPayload(code: .peerUnavailable, setupHash: s.setupHash, nodeKey: s.cluster.cloudKey.verifyingKey)
        let frame = reject.frame(sender: 1, instanceID: s.id, nodeSigningKey: s.cluster.cloudKey)
        #expect(throws: SessionError.reported(.peerUnavailable, by: 1, blamed: nil, authenticated: true)) {
            _ = try s.receiver.receive(frame, link: [1])
        }
        let forged = RejectPayload(code: .unsupportedVersion, setupHash: s.setupHash, nodeKey: Ed25519.SigningKey().verifyingKey)
        #expect(throws: SessionError.reported(.unsupportedVersion, by: 1, blamed: nil, authenticated: false)) {
            _ = try s.receiver.receive(forged.frame(sender: 1, instanceID: s.id, nodeSigningKey: Ed25519.SigningKey()), link: [1])
        }
        // Unbound (another session's setup_hash): reported, unauthenticated.
        let replayed = RejectPayload(code: .staleTimestamp, setupHash: SetupHash.random(), nodeKey: s.cluster.cloudKey.verifyingKey)
        #expect(throws: SessionError.reported(.staleTimestamp, by: 1, blamed: nil, authenticated: false)) {
            _ = try s.receiver.receive(replayed.frame(sender: 1, instanceID: s.id, nodeSigningKey: s.cluster.cloudKey), link: [1])
        }
        // A REJECT to an unparsable SETUP (zero setup_hash): reported; a signed UNSUPPORTED_VERSION counts as
        // authenticated only when its header echoes this session's instance_id (security review 2, finding 12).
        let zeros = [UInt8](repeating: 0, count: 32)
        let unsupported = RejectPayload(code: .unsupportedVersion, setupHash: nil, nodeKey: s.cluster.cloudKey.verifyingKey, detail: [1, 1])
        #expect(throws: SessionError.reported(.unsupportedVersion, by: 1, blamed: nil, authenticated: true)) {
            _ = try s.receiver.receive(unsupported.frame(sender: 1, instanceID: s.id, nodeSigningKey: s.cluster.cloudKey), link: [1])
        }
        #expect(throws: SessionError.reported(.unsupportedVersion, by: 1, blamed: nil, authenticated: false)) {
            _ = try s.receiver.receive(unsupported.frame(sender: 1, instanceID: InstanceID?.none, nodeSigningKey: s.cluster.cloudKey), link: [1])
        }
        let malformed = RejectPayload(code: .malformed, setupHash: SetupHash(checked: zeros), nodeKey: s.cluster.cloudKey.verifyingKey)
        #expect(throws: SessionError.reported(.malformed, by: 1, blamed: nil, authenticated: false)) {
            _ = try s.receiver.receive(malformed.frame(sender: 1, instanceID: InstanceID?.none, nodeSigningKey: s.cluster.cloudKey), link: [1])
        }
        // Receiving a REJECT never records anything.
        #expect(!s.receiver.hasOpened(1))
    }

    @Test func sessionKeyFrameBuilder() async throws {
        var s = try await AppSession(mode: .duo)
        _ = try s.receiver.receive(s.accept(1), link: [1])
        let node = s.nodeKeys[1] ?? SessionKeyPair()
        let stored = try node.signedFrame(kind: .broadcast, sender: 1, receiver: 0xFF, tag: 0x0101, seq: 1, instanceID: s.id, payload: [3])
        #expect(try s.receiver.receive(stored, link: [1]).payload == [3])
        #expect(throws: SessionError.self) { try node.signedFrame(kind: .pointToPoint, sender: 1, receiver: 0, seq: 0, instanceID: s.id, payload: []) }
        #expect(throws: SessionError.self) { try node.signedFrame(kind: .commit, sender: 1, receiver: 0xFF, seq: 0, instanceID: s.id, payload: []) }
        #expect(throws: SessionError.self) { try node.signedFrame(kind: .done, sender: 0, receiver: 0xFF, seq: 0, instanceID: s.id,
                                                                  payload: [UInt8](repeating: 0, count: 257)) }
    }

    @Test func trioRejectsFromRelayAndBeforeAccept() async throws {
        // Signing with {0, 2}: A is a pure relay, yet its own REJECT(PEER_UNAVAILABLE) is accepted.
        let cluster = Cluster(mode: .trio)
        let appKeys = SessionKeyPair()
        let payload = try cluster.setupPayload(.sign, appKeys: appKeys, participants: [0, 2])
        let setup = try await cluster.setupFrame(payload)
        var app = try FrameReceiver(local: 0, setupFrame: setup, setup: payload, localKeys: appKeys, trust: cluster.trust)
        let hash = app.setupHash
        let fromA = RejectPayload(code: .peerUnavailable, setupHash: hash, nodeKey: cluster.nodeA.verifyingKey,
                                  certificate: cluster.certificate(1))
        #expect(throws: SessionError.reported(.peerUnavailable, by: 1, blamed: nil, authenticated: true)) {
            _ = try app.receive(fromA.frame(sender: 1, instanceID: setup.header.instanceID, nodeSigningKey: cluster.nodeA), link: [1, 2])
        }
        // B's REJECT before any ACCEPT: trusted through its certificate, not without one.
        let fromB = RejectPayload(code: .signerUnavailable, setupHash: hash, nodeKey: cluster.nodeB.verifyingKey,
                                  certificate: cluster.certificate(2))
        #expect(throws: SessionError.reported(.signerUnavailable, by: 2, blamed: nil, authenticated: true)) {
            _ = try app.receive(fromB.frame(sender: 2, instanceID: setup.header.instanceID, nodeSigningKey: cluster.nodeB), link: [1, 2])
        }
        let bare = RejectPayload(code: .signerUnavailable, setupHash: hash, nodeKey: cluster.nodeB.verifyingKey)
        #expect(throws: SessionError.reported(.signerUnavailable, by: 2, blamed: nil, authenticated: false)) {
            _ = try app.receive(bare.frame(sender: 2, instanceID: setup.header.instanceID, nodeSigningKey: cluster.nodeB), link: [1, 2])
        }
        // A B-certificate presented for A's REJECT: role mismatch, unauthenticated.
        let misattributed = RejectPayload(code: .banned, setupHash: hash, nodeKey: cluster.nodeB.verifyingKey,
                                          certificate: cluster.certificate(2))
        #expect(throws: SessionError.reported(.banned, by: 1, blamed: nil, authenticated: false)) {
            _ = try app.receive(misattributed.frame(sender: 1, instanceID: setup.header.instanceID, nodeSigningKey: cluster.nodeB), link: [1, 2])
        }
        // But any other frame from the non-participant relay is UNEXPECTED.
        #expect(throws: SessionError.detected(.unexpected, blamed: nil)) {
            _ = try app.receive(cluster.accept(from: 1, setupHash: hash, instanceID: setup.header.instanceID, keys: SessionKeyPair()), link: [1, 2])
        }
    }

    @Test func relayDispositions() async throws {
        // Node A in a trio keygen: consumes and forwards app broadcasts, forwards app→B P2P untouched.
        let cluster = Cluster(mode: .trio)
        let appKeys = SessionKeyPair(), aKeys = SessionKeyPair(), bKeys = SessionKeyPair()
        let payload = try cluster.setupPayload(.keygen, appKeys: appKeys)
        let setup = try await cluster.setupFrame(payload)
        var a = try FrameReceiver(local: 1, setupFrame: setup, setup: payload, localKeys: aKeys, trust: cluster.trust, relays: true)
        let id = setup.header.instanceID
        let bcast = sessionFrame(.broadcast, from: 0, tag: 0x0101, seq: 1, payload: [1], instanceID: id, keys: appKeys)
        #expect(try a.receive(bcast, link: [0]).disposition == .consumeAndForward(to: 2))
        let toB = Frame(header: FrameHeader(kind: .pointToPoint, sender: 0, receiver: 2, tag: 0x0102, seq: 0, length: 1, instanceID: id),
                        sealed: [UInt8](repeating: 0, count: 17))
        let forwarded = try a.receive(toB, link: [0])
        #expect(forwarded.disposition == .forward(to: 2) && forwarded.payload.isEmpty)
        let bAccept = cluster.accept(from: 2, setupHash: a.setupHash, instanceID: id, keys: bKeys)
        #expect(try a.receive(bAccept, link: [2]).disposition == .consumeAndForward(to: 0))
        let bToApp = Frame(header: FrameHeader(kind: .pointToPoint, sender: 2, receiver: 0, tag: 0x0102, seq: 0, length: 1, instanceID: id),
                           sealed: [UInt8](repeating: 0, count: 17))
        #expect(try a.receive(bToApp, link: [2]).disposition == .forward(to: 0))
        // A frame from B on the app link is refused (session.md §6.1 rule 2).
        #expect(throws: SessionError.detected(.unexpected, blamed: nil)) { _ = try a.receive(bToApp, link: [0]) }
        // A non-relaying party never forwards.
        var b = try FrameReceiver(local: 2, setupFrame: setup, setup: payload, localKeys: bKeys, trust: cluster.trust)
        #expect(try b.receive(bcast, link: [0, 1]).disposition == .consume)
    }
}
