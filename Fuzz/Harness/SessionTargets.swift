import Foundation
import MPCCrypto
import MPCProtocols
import CloudNode
import SilentShardCore

/// The session layer's decoders (`docs/protocol/session.md` §3–§4): the frame envelope, SETUP, every signed
/// payload and status block, LINK_OPEN, node certificates, and `SetupValidator.validate`.
enum SessionTargets {
    static let now: UInt64 = 1_800_000_000_000
    static let cloudKey = FixedKeys.ed25519(1)
    static let deviceKey = FixedKeys.ed25519(2)
    static let sessionKeys = SessionKeyPair(signingKey: FixedKeys.ed25519(3), agreementKey: FixedKeys.x25519(4))
    static let nodeA = FixedKeys.ed25519(5)
    static let instanceID = InstanceID(checked: FixedKeys.bytes(0x1D))
    static let keyID = KeyID(checked: FixedKeys.bytes(0x11)), gen = Generation(checked: FixedKeys.bytes(0x22))
    static let digest = FixedKeys.bytes(0x33)

    static let certificate = NodeCertificate(role: .trioA, groupID: FixedKeys.bytes(0x44, 16),
                                             nodeKey: nodeA.verifyingKey, notBefore: now / 1000 - 86_400,
                                             notAfter: now / 1000 + 86_400, serial: 7, issuer: cloudKey)

    // MARK: frame

    static let frame = FuzzTarget(
        name: "frame", summary: "Frame.parse / parseSingle / parseBundle, FrameHeader.decode",
        seeds: {
            let setup = setupFrame(setupPayload(.keygen))
            let broadcast = sessionKeys.signedFrameOrNil(kind: .broadcast, sender: 0, receiver: 0xFF, tag: 0x0101, seq: 1,
                                                         payload: FixedKeys.bytes(9, 40))
            return [setup.encoded(), Frame.bundle([setup] + (broadcast.map { [$0] } ?? [])), setup.header.encoded()]
        },
        run: { bytes in
            if let header = try? FrameHeader.decode(bytes) {
                accepted()
                expect((try? FrameHeader.decode(header.encoded())) == header, "header round trip")
            }
            if let (frame, count) = try? Frame.parse(bytes[...]) {
                expect(count > 0 && count <= bytes.count, "parse consumed \(count) of \(bytes.count)")
                let encoded = frame.encoded()
                expect(encoded == Array(bytes[..<count]), "frame re-encoding differs from its bytes")
                expect((try? Frame.parseSingle(encoded)) == frame, "frame round trip")
            }
            if let frames = try? Frame.parseBundle(bytes) {
                expect(!frames.isEmpty, "empty bundle accepted")
                expect((try? Frame.parseBundle(Frame.bundle(frames))) == frames, "bundle round trip")
            }
        })

    // MARK: setup

    static let setup = FuzzTarget(
        name: "setup", summary: "SetupPayload(bytes:) (SETUP TLV)",
        seeds: { SessionOperation.allCases.map { setupPayload($0).encoded() } },
        run: { bytes in
            guard let payload = try? SetupPayload(bytes: bytes) else { return }
            accepted()
            // Unknown extensions are kept so the signed bytes re-encode exactly.
            expect(payload.encoded() == bytes, "SETUP re-encoding differs from its bytes")
            expect((try? SetupPayload(bytes: payload.encoded())) == payload, "SETUP round trip")
        })

    // MARK: payloads

    /// Selector % 21 picks the decoder; each checks decode(encode(decode(x))) == decode(x).
    static let payloads = FuzzTarget(
        name: "payloads",
        summary: "ACCEPT, REJECT, COMMIT, OUTCOME, ABORT, DONE, READY, STORED, EXPORT_RESPONSE, app_state, key_status, LINK_OPEN, PEER_STATUS, certificates, party sets, paths, keys, PRESIG_QUERY, PRESIG_STATUS, the app's presignature records",
        seeds: {
            let status = KeyStatus(currentGen: gen, prepared: (gen, digest), preparedHoldsCommit: true, decision: .committed)
            let accept = AcceptPayload(setupHash: SetupHash(checked: digest), nodeKey: nodeA.verifyingKey, certificate: certificate,
                                       sessionKeys: sessionKeys.publicKeys, nodeTime: now, keyStatus: status,
                                       limits: (maxPayload: 1 << 20, maxMessage: 1 << 22))
            let link = LinkOpenPayload(certificate: certificate, purpose: .session, mode: .trio, algorithm: .ecdsa,
                                       operation: .sign, token: Array("token".utf8), timestamp: now,
                                       clientAddress: Array("192.0.2.1".utf8))
            let encodings: [[UInt8]] = [
                accept.encoded(),
                RejectPayload(code: .replay, retryAfterSeconds: 5, setupHash: SetupHash(checked: digest), nodeKey: nodeA.verifyingKey,
                              certificate: certificate, detail: [1, 2, 3]).encoded(),
                ReadyPayload(keyID: keyID, gen: gen, digest: digest).encoded,
                CommitPayload(keyID: keyID, gen: gen, digest: digest, context: .reconcile).encoded,
                OutcomePayload(keyID: keyID, gen: gen, digest: digest, outcome: .committed, currentGen: gen).encoded,
                AbortPayload(code: .replay, blamed: 1, ban: true, rollback: (keyID, gen), detail: "stale").encoded,
                DonePayload.ecdsa(FixedKeys.bytes(5, 64) + [1]).encoded,
                StoredPayload(presigID: InstanceID(checked: digest), keyID: keyID, gen: gen, expiresAt: now).encoded,
                ExportResponsePayload(setupHash: SetupHash(checked: digest), keyID: keyID, gen: gen, party: 1,
                                      exportMessage: FixedKeys.bytes(8, 80)).encoded,
                AppState(currentGen: gen, staged: (gen, digest)).encoded,
                status.encoded,
                link.encoded(),
                PeerStatusPayload.response(keyID: keyID, gen: gen, state: .prepared, digest: digest,
                                           commitFrame: [1, 2, 3]).encoded,
                certificate.encoded,
                PartySet([0, 1, 2]).encoded,
                DerivationPathBytes(indices: [0x8000_002C, 0, 1]).encoded,
                sessionKeys.publicKeys.bytes,
                PresignatureQueryPayload(keyID: keyID, ids: [instanceID, InstanceID(checked: digest)]).encoded(),
                PresignatureStatusPayload(nodeKey: nodeA.verifyingKey, certificate: certificate, keyID: keyID,
                                          entries: [.init(id: instanceID, state: .held, expiresAtMilliseconds: now),
                                                    .init(id: InstanceID(checked: digest), state: .consumed,
                                                          expiresAtMilliseconds: 0)]).encoded(),
                presignatureRecord.encoded(),
                presignatureSecrets.encoded(),
            ]
            return encodings.enumerated().map { [UInt8($0.offset)] + $0.element }
        },
        run: { input in
            guard let (selector, bytes) = split(input) else { return }
            switch selector % 21 {
            case 0: roundTrip(bytes, AcceptPayload.init(bytes:)) { $0.encoded() }
            case 1: roundTrip(bytes, RejectPayload.init(bytes:)) { $0.encoded() }
            case 2: roundTrip(bytes, ReadyPayload.init(bytes:), exact: true) { $0.encoded }
            case 3: roundTrip(bytes, CommitPayload.init(bytes:), exact: true) { $0.encoded }
            case 4: roundTrip(bytes, OutcomePayload.init(bytes:)) { $0.encoded }
            case 5: roundTrip(bytes, AbortPayload.init(bytes:), exact: true) { $0.encoded }
            case 6: roundTrip(bytes, DonePayload.init(bytes:), exact: true) { $0.encoded }
            case 7: roundTrip(bytes, StoredPayload.init(bytes:), exact: true) { $0.encoded }
            case 8: roundTrip(bytes, ExportResponsePayload.init(bytes:), exact: true) { $0.encoded }
            case 9: roundTrip(bytes, AppState.init(bytes:), exact: true) { $0.encoded }
            case 10: roundTrip(bytes, KeyStatus.init(bytes:), exact: true) { $0.encoded }
            case 11: roundTrip(bytes, LinkOpenPayload.init(bytes:)) { $0.encoded() }
            case 12: roundTrip(bytes, PeerStatusPayload.init(bytes:), exact: true) { $0.encoded }
            case 13: roundTrip(bytes, NodeCertificate.init(bytes:), exact: true) { $0.encoded }
            case 14: roundTrip(bytes, PartySet.init(bytes:)) { $0.encoded }
            case 15: roundTrip(bytes, DerivationPathBytes.init(bytes:)) { $0.encoded }
            case 16: roundTrip(bytes, SessionPublicKeys.init(bytes:), exact: true) { $0.bytes }
            case 17: roundTrip(bytes, PresignatureQueryPayload.init(bytes:), exact: true) { $0.encoded() }
            case 18: roundTrip(bytes, PresignatureStatusPayload.init(bytes:), exact: true) { $0.encoded() }
            case 19:
                // The app's presignature record, stored under the id it names.
                guard bytes.count >= 37 else { return }
                let storageKeyId = KeyId.presignaturePrefix + Hex.encode(Array(bytes[5..<37]))
                guard let record = try? PresignatureRecord(bytes: bytes, storageKeyId: storageKeyId) else { return }
                accepted()
                expect(record.encoded() == bytes, "presignature record re-encoding differs from its bytes")
            default:
                guard let secrets = try? PresignatureSecrets(bytes: bytes, signer: 1) else { return }
                accepted()
                expect(secrets.encoded() == bytes, "presignature secrets re-encoding differs from its bytes")
            }
        })

    /// decode(encode(decode(x))) == decode(x); with `exact`, also encode(decode(x)) == x (fixed layouts).
    static func roundTrip<T: Equatable>(_ bytes: [UInt8], _ decode: ([UInt8]) throws(SessionError) -> T,
                                        exact: Bool = false, _ encode: (T) -> [UInt8]) {
        guard let value = try? decode(bytes) else { return }
        accepted()
        let encoded = encode(value)
        expect((try? decode(encoded)) == value, "\(T.self) round trip")
        if exact { expect(encoded == bytes, "\(T.self) re-encoding differs from its bytes") }
    }

    static let presignatureSecrets = PresignatureSecrets(
        presignature: FixedKeys.bytes(0x55, 200),
        finalKeys: fixture("preSignFinal keys") {
            try PreSignFinalKeys(signer: 1, requestKey: FixedKeys.bytes(0x56), responseKey: FixedKeys.bytes(0x57))
        },
        peerRound1: FixedKeys.bytes(0x58, 64))

    static var presignatureRecord: PresignatureRecord {
        let header = PresignatureRecord.Header(id: instanceID.bytes, keyId: keyID.bytes, generation: gen.bytes, algorithm: .ecdsa,
                                               signer: 1, chainPath: "m/1/2", derivedPublicKey: FixedKeys.bytes(0x59, 33),
                                               expiresAtMilliseconds: now)
        var record = fixture("presignature record") {
            try PresignatureRecord.sealing(presignatureSecrets.encoded(), header: header, key: FixedKeys.bytes(0x5A))
        }
        record.state = .finishing(message: FixedKeys.bytes(0x5B), request: FixedKeys.bytes(0x5C, 100))
        return record
    }

    // MARK: setup-validator

    /// Contexts the validator runs under (selector bits 1–2): duo keygen, duo sign, trio refresh.
    static let contexts: [SetupValidationContext] = [
        SetupValidationContext(token: .accepted, mode: .duo, algorithm: .ecdsa, operation: .keygen, params: nil,
                               nodeIndex: 1, cloudKey: cloudKey.verifyingKey.bytes, groupID: nil, now: now),
        SetupValidationContext(token: .accepted, mode: .duo, algorithm: .ecdsa, operation: .sign,
                               params: keyID.hex, nodeIndex: 1, cloudKey: cloudKey.verifyingKey.bytes,
                               groupID: nil, now: now),
        SetupValidationContext(token: .accepted, mode: .trio, algorithm: .eddsa, operation: .refresh,
                               params: keyID.hex, nodeIndex: 2, cloudKey: cloudKey.verifyingKey.bytes,
                               groupID: FixedKeys.bytes(0x44, 16), now: now),
    ]

    /// Selector bit 0 clear: the rest is the first binary message as received. Set: the rest is a SETUP
    /// payload, framed and signed here with the fixed device key, so mutations reach the field rules.
    static let setupValidator = FuzzTarget(
        name: "setup-validator", summary: "SetupValidator.validate (fixed contexts; raw message or re-signed payload)",
        seeds: {
            let payloads = [setupPayload(.keygen), setupPayload(.sign), setupPayload(.refresh, mode: .trio, algorithm: .eddsa)]
            var seeds: [[UInt8]] = []
            for (index, payload) in payloads.enumerated() {
                seeds.append([UInt8(index << 1)] + setupFrame(payload).encoded())
                seeds.append([UInt8(index << 1 | 1)] + payload.encoded())
            }
            return seeds
        },
        run: { input in
            guard let (selector, rest) = split(input) else { return }
            let context = contexts[Int(selector >> 1) % contexts.count]
            let message: [UInt8]
            if selector & 1 == 0 {
                message = rest
            } else {
                guard rest.count <= Int(UInt32.max) else { return }
                let header = FrameHeader(kind: .setup, sender: 0, receiver: FrameHeader.everyParticipant,
                                         length: UInt32(rest.count), instanceID: instanceID)
                message = Frame.signed(header: header, payload: rest, key: deviceKey).encoded()
            }
            var replay = fixture("replay window") { try ReplayWindow() }
            guard let (validated, others) = try? SetupValidator.validate(message: message, context: context, replay: &replay)
            else { return }
            accepted()
            expect(validated.mode == context.mode && validated.operation == context.operation, "route mismatch accepted")
            expect(validated.frame.hasValidSignature(by: validated.deviceKey), "unsigned SETUP accepted")
            expect(validated.payload.cloudKey == context.cloudKey, "wrong cluster accepted")
            expect(Frame.bundle([validated.frame] + others) == message, "bundle bytes")
            var again = replay
            expect((try? SetupValidator.validate(message: message, context: context, replay: &again)) == nil,
                   "replayed SETUP accepted")
        })

    // MARK: builders

    static func setupPayload(_ operation: SessionOperation, mode: SessionMode = .duo,
                             algorithm: SessionAlgorithm = .ecdsa) -> SetupPayload {
        let device = fixture("device key") { try DeviceKey(type: .ed25519, publicKey: deviceKey.verifyingKey.bytes) }
        let parties: [PartyIndex] = mode == .duo ? [0, 1] : [0, 1, 2]
        var payload = SetupPayload(mode: mode, algorithm: algorithm, operation: operation, timestamp: now,
                                   deviceKey: device, sessionKeys: sessionKeys.publicKeys,
                                   cloudKey: cloudKey.verifyingKey.bytes, participants: PartySet(parties))
        if mode == .trio { payload.groupID = FixedKeys.bytes(0x44, 16) }
        if operation != .keygen && operation != .import {
            payload.keyID = keyID
            payload.gen = gen
        }
        switch operation {
        case .sign, .preSignFinal:
            payload.path = DerivationPathBytes(indices: [0, 1]).encoded
            payload.message = algorithm == .ecdsa ? FixedKeys.bytes(7) : Array("hello".utf8)
        case .preSign: payload.presignTTL = 60
        case .hardDerivation: payload.path = DerivationPathBytes(indices: [0x8000_0001]).encoded
        case .export: payload.exportKey = FixedKeys.x25519(6).publicKey.bytes
        case .import:
            payload.keyID = keyID
            payload.publicKey = fixture("point") {
                try Secp256k1.Point(base: Secp256k1.Scalar(bytes: FixedKeys.bytes(0, 31) + [5])).compressed()
            }
            payload.chainCode = ChainCode(checked: FixedKeys.bytes(0x55))
        case .reconcile: payload.appState = AppState(currentGen: gen, staged: nil).encoded
        default: break
        }
        payload.clientInfo = Array("fuzz".utf8)
        return payload
    }

    static func setupFrame(_ payload: SetupPayload) -> Frame {
        let bytes = payload.encoded()
        let header = FrameHeader(kind: .setup, sender: 0, receiver: FrameHeader.everyParticipant,
                                 length: UInt32(bytes.count), instanceID: instanceID)
        return Frame.signed(header: header, payload: bytes, key: deviceKey)
    }
}

extension SessionKeyPair {
    func signedFrameOrNil(kind: FrameKind, sender: PartyIndex, receiver: PartyIndex, tag: UInt16, seq: UInt32,
                          payload: [UInt8]) -> Frame? {
        try? signedFrame(kind: kind, sender: sender, receiver: receiver, tag: tag, seq: seq,
                         instanceID: SessionTargets.instanceID, payload: payload)
    }
}
