import MPCCrypto
import MPCProtocols
import Testing
@testable import CloudNode
@testable import SilentShardCore

@Suite("SETUP validation at the node (session.md §4.3 steps 1–8)")
struct SetupValidationTests {
    func validate(_ message: [UInt8], _ context: SetupValidationContext,
                  replay: inout ReplayWindow) -> Result<ValidatedSetup, SetupRejection> {
        do { return .success(try SetupValidator.validate(message: message, context: context, replay: &replay).setup) }
        catch { return .failure(error) }
    }

    func rejection(_ message: [UInt8], _ context: SetupValidationContext) throws -> WireCode? {
        var replay = try ReplayWindow()
        if case .failure(let r) = validate(message, context, replay: &replay) { return r.code }
        return nil
    }

    @Test(arguments: [SessionMode.duo, .trio], [MessageSignerKeyType.ed25519, .p256])
    func everyOfferedOperationValidates(mode: SessionMode, keyType: MessageSignerKeyType) async throws {
        let cluster = Cluster(mode: mode, device: keyType == .ed25519 ? SoftwareEd25519MessageSigner() : SoftwareP256MessageSigner())
        for algorithm in SessionAlgorithm.allCases {
            for operation in SessionOperation.allCases where operation != .preSignFinal
                && operation.isOffered(mode: mode, algorithm: algorithm) && !(mode == .duo && operation == .export) {
                let payload = try cluster.setupPayload(operation, algorithm: algorithm, appKeys: SessionKeyPair())
                let frame = try await cluster.setupFrame(payload)
                var replay = try ReplayWindow()
                let result = validate(frame.encoded(), cluster.context(operation, algorithm: algorithm,
                                                                       params: payload.keyID?.hex), replay: &replay)
                guard case .success(let setup) = result else {
                    Issue.record("\(mode) \(algorithm) \(operation): \(result)")
                    continue
                }
                #expect(setup.setupHash == SessionHash.setupHash(headerAndPayload: frame.headerAndPayload))
                #expect(setup.deviceKey == (try DeviceKey(signer: cluster.device)))
                #expect(replay.count == 1)
            }
        }
    }

    @Test func duoExportPost() async throws {
        let cluster = Cluster(mode: .duo)
        let payload = try cluster.setupPayload(.export, appKeys: nil)
        let frame = try await cluster.setupFrame(payload, exportPost: true)
        #expect(frame.header.receiver == 1)
        let context = cluster.context(.export, params: (payload.keyID?.hex ?? ""), exportPost: true)
        #expect(try rejection(frame.encoded(), context) == nil)
        // Over the WebSocket route, duo export is not offered; with session keys it is invalid.
        #expect(try rejection(frame.encoded(), cluster.context(.export, params: (payload.keyID?.hex ?? ""))) == .unexpected)
        let withKeys = try await cluster.setupFrame(try cluster.setupPayload(.export, appKeys: SessionKeyPair()), exportPost: true)
        #expect(try rejection(withKeys.encoded(), context) == .invalidParameter)
    }

    /// Every step's REJECT code, each from a SETUP that is valid except for one thing.
    @Test func rejectionCodesInOrder() async throws {
        let cluster = Cluster(mode: .trio)
        let keys = SessionKeyPair()
        let payload = try cluster.setupPayload(.sign, appKeys: keys, participants: [0, 1])
        let params = (payload.keyID?.hex ?? "")
        let good = try await cluster.setupFrame(payload)
        let context = cluster.context(.sign, params: params)
        #expect(try rejection(good.encoded(), context) == nil)

        // 1. token
        var c = context; c.token = .missing
        #expect(try rejection(good.encoded(), c) == .authRequired)
        c.token = .invalid
        #expect(try rejection(good.encoded(), c) == .authInvalid)
        // 2. frame and TLV
        #expect(try rejection(Array(good.encoded().prefix(40)), context) == .malformed)
        var bytes = good.encoded(); bytes[0] = 9
        #expect(try rejection(bytes, context) == .unsupportedVersion)
        let bcast = sessionFrame(.broadcast, from: 0, tag: 0x1101, seq: 0, payload: [1], instanceID: good.header.instanceID, keys: keys)
        #expect(try rejection(bcast.encoded(), context) == .unexpected)
        let seq1 = try await signedSetup(cluster, payload, seq: 1)
        #expect(try rejection(seq1.encoded(), context) == .unexpected)
        var unknown = payload; unknown.extensions = [TLVRecord(tag: 0x7E, value: [])]
        #expect(try rejection(try await cluster.setupFrame(unknown).encoded(), context) == .unknownField)
        var ignoredExtension = payload; ignoredExtension.extensions = [TLVRecord(tag: 0xFE, value: [1])]
        #expect(try rejection(try await cluster.setupFrame(ignoredExtension).encoded(), context) == nil)
        // 3. route, params, operation
        c = context; c.operation = .preSign
        #expect(try rejection(good.encoded(), c) == .routeMismatch)
        c = context; c.algorithm = .eddsa
        #expect(try rejection(good.encoded(), c) == .routeMismatch)
        c = context; c.params = Hex.encode([UInt8](repeating: 0x12, count: 32))
        #expect(try rejection(good.encoded(), c) == .routeMismatch)
        c = context; c.params = nil
        #expect(try rejection(good.encoded(), c) == .routeMismatch)
        c = context; c.params = params.uppercased()
        #expect(try rejection(good.encoded(), c) == nil)
        c = context; c.servedOperations = [.keygen]
        #expect(try rejection(good.encoded(), c) == .unsupportedOperation)
        let duo = Cluster(mode: .duo)
        // recover does not exist in duo (preSign does since v1.3, issue 20).
        var duoRecover = try duo.setupPayload(.sign, appKeys: keys, participants: [0, 1]); duoRecover.operationCode = 7
        #expect(try rejection(try await duo.setupFrame(duoRecover).encoded(), duo.context(.recover, params: params)) == .unsupportedOperation)
        var edHard = try cluster.setupPayload(.hardDerivation, appKeys: keys); edHard.algorithmCode = 2
        #expect(try rejection(try await cluster.setupFrame(edHard).encoded(),
                              cluster.context(.hardDerivation, algorithm: .eddsa, params: params)) == .unsupportedOperation)
        // 4. cluster
        c = context; c.cloudKey = Ed25519.SigningKey().verifyingKey.bytes
        #expect(try rejection(good.encoded(), c) == .wrongCluster)
        c = context; c.groupID = SecureRandom.bytes(count: 16)
        #expect(try rejection(good.encoded(), c) == .wrongCluster)
        // 5. timestamp (± 120 s inclusive), detail = node time
        for (skew, expected) in [(Int64(120_000), nil as WireCode?), (-120_000, nil), (120_001, .staleTimestamp), (-120_001, .staleTimestamp)] {
            let stamped = try cluster.setupPayload(.sign, appKeys: keys, participants: [0, 1],
                                                   timestamp: UInt64(Int64(Cluster.now) + skew))
            #expect(try rejection(try await cluster.setupFrame(stamped).encoded(), context) == expected)
        }
        var replay = try ReplayWindow()
        let stale = try cluster.setupPayload(.sign, appKeys: keys, participants: [0, 1], timestamp: 0)
        if case .failure(let r) = validate(try await cluster.setupFrame(stale).encoded(), context, replay: &replay) {
            #expect(r.detail == Cluster.now.bigEndianBytes)
        } else { Issue.record("stale accepted") }
        // 6. device signature (wrong signature, wrong key, undecodable key)
        bytes = good.encoded(); bytes[bytes.count - 1] ^= 1
        #expect(try rejection(bytes, context) == .deviceSignatureInvalid)
        var otherKey = payload; otherKey.deviceKey = try DeviceKey(signer: SoftwareP256MessageSigner()).identity
        #expect(try rejection(try await cluster.setupFrame(otherKey).encoded(), context) == .deviceSignatureInvalid)
        var badKey = payload; badKey.deviceKey = [1] + [UInt8](repeating: 0, count: 32)
        #expect(try rejection(try await cluster.setupFrame(badKey).encoded(), context) == .deviceSignatureInvalid)
        // A failure before step 7 leaves the replay store untouched.
        #expect(replay.count == 0)
        // 7. replay
        #expect(validate(good.encoded(), context, replay: &replay).isSuccess)
        if case .failure(let r) = validate(good.encoded(), context, replay: &replay) { #expect(r.code == .replay) }
        else { Issue.record("replay accepted") }
    }

    func signedSetup(_ cluster: Cluster, _ payload: SetupPayload, seq: UInt32) async throws -> Frame {
        let body = payload.encoded()
        let header = FrameHeader(kind: .setup, sender: 0, receiver: 0xFF, seq: seq, length: UInt32(body.count),
                                 instanceID: InstanceID.random())
        return try await Frame.signedSetup(header: header, payload: body, signer: cluster.device)
    }

    /// Step 8: each field rule of session.md §4.2 is INVALID_PARAMETER.
    @Test func fieldRules() async throws {
        let cluster = Cluster(mode: .trio)
        let keys = SessionKeyPair()
        func code(_ operation: SessionOperation, algorithm: SessionAlgorithm = .ecdsa, participants: [PartyIndex]? = nil,
                  nodeIndex: PartyIndex = 1, _ edit: (inout SetupPayload) -> Void) async throws -> WireCode? {
            var payload = try cluster.setupPayload(operation, algorithm: algorithm, appKeys: keys, participants: participants)
            edit(&payload)
            let frame = try await cluster.setupFrame(payload)
            return try rejection(frame.encoded(), cluster.context(operation, algorithm: algorithm,
                                                                  params: payload.keyID?.hex, nodeIndex: nodeIndex))
        }
        let invalid: WireCode? = .invalidParameter
        #expect(try await code(.keygen) { _ in } == nil)
        // Another keyshare protocol version is a version refusal (step 2), not a field rule.
        #expect(try await code(.keygen) { $0.protocolVersion = 1 } == .unsupportedVersion)
        #expect(try await code(.keygen) { $0.protocolVersion = 2 } == .unsupportedVersion)
        #expect(try await code(.keygen) { $0.protocolVersion = 4 } == .unsupportedVersion)
        #expect(try await code(.keygen) { $0.threshold = [2, 2] } == invalid)
        #expect(try await code(.keygen) { $0.participants = PartySet([0, 1]).encoded } == invalid)
        #expect(try await code(.keygen) { $0.participants = [3, 0, 2, 1] } == invalid)
        #expect(try await code(.keygen) { $0.sessionKeys = nil } == invalid)
        #expect(try await code(.keygen) { $0.sessionKeys = [1] + [UInt8](repeating: 0, count: 63) } == invalid)
        #expect(try await code(.keygen) { $0.gen = Generation(checked: [UInt8](repeating: 1, count: 32)) } == invalid)        // forbidden field
        #expect(try await code(.keygen) { $0.groupID = cluster.groupID } == invalid)                     // forbidden for keygen
        #expect(try await code(.keygen) { $0.clientInfo = [0xFF, 0xFE] } == invalid)                     // not UTF-8
        #expect(try await code(.refresh) { $0.gen = nil } == invalid)                                    // required field
        #expect(try await code(.refresh) { $0.holders = PartySet([0, 1, 2]).encoded } == nil)
        #expect(try await code(.refresh) { $0.holders = PartySet([1]).encoded } == invalid)              // fewer than t
        #expect(try await code(.recover) { $0.holders = PartySet([0, 1]).encoded } == invalid)
        #expect(try await code(.sign, participants: [0, 2], nodeIndex: 2) { _ in } == nil)
        #expect(try await code(.sign, participants: [0, 1, 2]) { _ in } == invalid)
        #expect(try await code(.sign, participants: [1, 2]) { _ in } == invalid)
        #expect(try await code(.sign, participants: [0, 2]) { _ in } == nil)                              // A relays for {0, 2}
        #expect(try await code(.sign, participants: [0, 1], nodeIndex: 2) { _ in } == invalid)            // B must participate
        #expect(try await code(.sign, participants: [0, 1]) { $0.path = DerivationPathBytes(indices: [0x8000_0000]).encoded } == invalid)
        #expect(try await code(.sign, participants: [0, 1]) { $0.path = [1, 0, 0] } == invalid)
        #expect(try await code(.sign, participants: [0, 1]) { $0.message = [UInt8](repeating: 1, count: 31) } == invalid)
        #expect(try await code(.sign, algorithm: .eddsa, participants: [0, 1]) { $0.message = [UInt8](repeating: 1, count: 32_768) } == nil)
        #expect(try await code(.sign, algorithm: .eddsa, participants: [0, 1]) { $0.message = [UInt8](repeating: 1, count: 32_769) } == invalid)
        #expect(try await code(.preSign, participants: [0, 1]) { $0.presignTTL = 0 } == invalid)
        #expect(try await code(.preSign, participants: [0, 1]) { $0.presignTTL = 3600 } == nil)
        #expect(try await code(.hardDerivation) { $0.path = DerivationPathBytes(indices: []).encoded } == invalid)
        #expect(try await code(.import) { $0.publicKey = [0x02] + [UInt8](repeating: 0xFF, count: 32) } == invalid)
        #expect(try await code(.import, algorithm: .eddsa) { $0.publicKey = [1] + [UInt8](repeating: 0, count: 31) } == invalid)
        #expect(try await code(.export) { $0.exportKey = [UInt8](repeating: 0, count: 32) } == invalid)
        #expect(try await code(.reconcile) { $0.appState = [8] } == invalid)
    }
}

extension Result {
    var isSuccess: Bool { if case .success = self { return true } else { return false } }
}
