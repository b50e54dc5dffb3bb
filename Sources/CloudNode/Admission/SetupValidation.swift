import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// What the route and the node itself say about a SETUP (`docs/protocol/session.md` §2.1, §4.3).
package struct SetupValidationContext: Sendable {
    /// Result of the token check (session.md §4.3 step 1, session.md §9.1), done by the node's verifier before this.
    package enum TokenVerdict: Sendable, Equatable {
        case accepted, missing, invalid
    }

    package var token: TokenVerdict
    /// The route's (mode, algorithm, operation).
    package var mode: SessionMode
    package var algorithm: SessionAlgorithm
    package var operation: SessionOperation
    /// The route's `params` (hex key id or nil).
    package var params: String?
    /// This node's party index (1 or 2).
    package var nodeIndex: PartyIndex
    /// Operations this node's role serves (UNSUPPORTED_OPERATION otherwise).
    package var servedOperations: Set<SessionOperation>
    /// The node's `cloudVerifyingKey` (duo: its node key; trio: the cluster key).
    package var cloudKey: [UInt8]
    /// The node's group id (trio), or nil.
    package var groupID: [UInt8]?
    /// Whether this SETUP arrived as the duo export POST (receiver 1, no session keys).
    package var isExportPost: Bool
    /// Node time, ms since the Unix epoch.
    package var now: UInt64

    package init(token: TokenVerdict, mode: SessionMode, algorithm: SessionAlgorithm, operation: SessionOperation,
                params: String?, nodeIndex: PartyIndex, servedOperations: Set<SessionOperation> = Set(SessionOperation.allCases),
                cloudKey: [UInt8], groupID: [UInt8]?, isExportPost: Bool = false, now: UInt64) {
        self.token = token
        self.mode = mode
        self.algorithm = algorithm
        self.operation = operation
        self.params = params
        self.nodeIndex = nodeIndex
        self.servedOperations = servedOperations
        self.cloudKey = cloudKey
        self.groupID = groupID
        self.isExportPost = isExportPost
        self.now = now
    }
}

/// A SETUP that passed session.md §4.3 steps 1–8.
package struct ValidatedSetup: Sendable, Equatable {
    package let frame: Frame
    package let payload: SetupPayload
    package let mode: SessionMode
    package let algorithm: SessionAlgorithm
    package let operation: SessionOperation
    package let deviceKey: DeviceKey
    /// nil only in the duo export POST.
    package let sessionKeys: SessionPublicKeys?
    package let participants: PartySet
    package let holders: PartySet?
    /// `Hs("setup"; header ‖ payload)`.
    package let setupHash: SetupHash
    package var instanceID: InstanceID { frame.header.instanceID }
    /// Whether the validating node only relays this session (trio A when S = {0, 2}).
    package let isRelayOnly: Bool
}

/// A SETUP refused by the node: the REJECT code and its code-specific detail (session.md §10: STALE_TIMESTAMP
/// carries the node time as u64).
package struct SetupRejection: Error, Sendable, Equatable {
    package let code: WireCode
    package let detail: [UInt8]
    /// REJECT's `retry_after_s` (session.md §4.5): when a `delay` code (session.md §10) may succeed again; 0 = unknown.
    package let retryAfterSeconds: UInt32
    package init(_ code: WireCode, detail: [UInt8] = [], retryAfterSeconds: UInt32 = 0) {
        self.code = code
        self.detail = detail
        self.retryAfterSeconds = retryAfterSeconds
    }
}

/// The first binary message of a step (or an export POST body) decoded once, before anything about it is
/// verified: the node's rate limits read the device key it names (session.md §9.5, checked before the
/// signature) and ``SetupValidator`` goes on from it, so the bytes are parsed once.
package struct ParsedSetupMessage: Sendable {
    /// The bundle's frames, or why it is not a bundle.
    let frames: Result<[Frame], SessionError>
    /// The first frame's body as a SETUP payload (nil: no first frame).
    let payload: Result<SetupPayload, SessionError>?

    /// Decodes `message` (session.md §3.5 steps 1–2 and the TLV; nothing is verified).
    package init(_ message: [UInt8]) {
        do throws(SessionError) {
            let frames = try Frame.parseBundle(message)
            self.frames = .success(frames)
            payload = frames.first.map { frame in
                do throws(SessionError) { return .success(try SetupPayload(bytes: frame.body)) } catch { return .failure(error) }
            }
        } catch {
            frames = .failure(error)
            payload = nil
        }
    }

    /// The device key identity the SETUP names, before anything about it is verified (nil: no SETUP payload).
    package var unverifiedDeviceKey: [UInt8]? {
        guard case .success(let frames) = frames, frames.first?.header.kind == .setup,
              case .success(let payload)? = payload
        else { return nil }
        return payload.deviceKey
    }
}

/// The node's validation of SETUP, steps 1–8 of session.md §4.3, in order, first failure wins. Steps 9–13
/// (authorization, key state, policy, trio forwarding, ACCEPT) need the node's stores and follow.
package enum SetupValidator {
    /// Validates the bytes of the first binary message (a bundle whose first frame must be the SETUP;
    /// the app's early broadcasts may follow and are returned untouched for the session to process).
    /// `replay` is updated only when steps 1–6 passed (step 7).
    package static func validate(message: [UInt8], context: SetupValidationContext,
                                replay: inout ReplayWindow) throws(SetupRejection) -> (setup: ValidatedSetup, rest: [Frame]) {
        try validate(ParsedSetupMessage(message), context: context, replay: &replay)
    }

    /// ``validate(message:context:replay:)`` of a message already decoded.
    package static func validate(_ parsed: ParsedSetupMessage, context: SetupValidationContext,
                                replay: inout ReplayWindow) throws(SetupRejection) -> (setup: ValidatedSetup, rest: [Frame]) {
        // 1. Token.
        switch context.token {
        case .accepted: break
        case .missing: throw SetupRejection(.authRequired)
        case .invalid: throw SetupRejection(.authInvalid)
        }
        // 2. Frame checks (session.md §3.5 steps 1–2) and TLV decoding.
        let frames: [Frame]
        switch parsed.frames {
        case .success(let decoded): frames = decoded
        case .failure(let error): throw rejection(error)
        }
        guard let frame = frames.first else { throw SetupRejection(.malformed) }
        let header = frame.header
        let expectedReceiver: PartyIndex = context.isExportPost ? context.nodeIndex : FrameHeader.everyParticipant
        guard header.kind == .setup, header.sender == 0, header.seq == 0, header.receiver == expectedReceiver
        else { throw SetupRejection(.unexpected) }
        if context.isExportPost && frames.count != 1 { throw SetupRejection(.malformed) }
        let payload: SetupPayload
        switch parsed.payload {
        case .success(let decoded)?: payload = decoded
        case .failure(let error)?: throw rejection(error)
        case nil: throw SetupRejection(.malformed)  // unreachable: a first frame exists
        }
        // A SETUP of another keyshare protocol version (a v1 app) is refused as a version, not as a
        // parameter, so its SDK can say why (`session.md` §4.3 step 2, §11).
        guard SessionConstants.supportedProtocolVersions.contains(payload.protocolVersion) else {
            throw SetupRejection(.unsupportedVersion, detail: SessionConstants.unsupportedVersionDetail)
        }

        // 3. Route, params, operation offered.
        guard let mode = payload.mode, let algorithm = payload.algorithm, let operation = payload.operation,
              mode == context.mode, algorithm == context.algorithm, operation == context.operation
        else { throw SetupRejection(.routeMismatch) }
        try checkParams(context.params, keyID: payload.keyID, operation: operation, isExportPost: context.isExportPost)
        guard operation != .preSignFinal, operation.isOffered(mode: mode, algorithm: algorithm),
              context.servedOperations.contains(operation),
              operation != .export || (mode == .duo) == context.isExportPost
        else { throw SetupRejection(.unsupportedOperation) }

        // 4. Cluster.
        guard payload.cloudKey == context.cloudKey else { throw SetupRejection(.wrongCluster) }
        if let groupID = payload.groupID, let own = context.groupID, groupID != own {
            throw SetupRejection(.wrongCluster)
        }

        // 5. Timestamp.
        guard replay.isFresh(timestamp: payload.timestamp, now: context.now) else {
            throw SetupRejection(.staleTimestamp, detail: context.now.bigEndianBytes)
        }

        // 6. Device signature (an undecodable device key cannot have signed: same code).
        guard let deviceKey = try? DeviceKey(identity: payload.deviceKey), frame.hasValidSignature(by: deviceKey)
        else { throw SetupRejection(.deviceSignatureInvalid) }

        // 7. Replay store.
        do { try replay.insert(header.instanceID, now: context.now) } catch { throw SetupRejection(.replay) }

        // 8. Field rules.
        let checked: (SessionPublicKeys?, PartySet, PartySet?)
        do {
            checked = try SetupFieldRules.check(payload, mode: mode, algorithm: algorithm, operation: operation,
                                                isExportPost: context.isExportPost, nodeIndex: context.nodeIndex)
        } catch { throw SetupRejection(.invalidParameter) }

        let setup = ValidatedSetup(frame: frame, payload: payload, mode: mode, algorithm: algorithm,
                                   operation: operation, deviceKey: deviceKey, sessionKeys: checked.0,
                                   participants: checked.1, holders: checked.2,
                                   setupHash: SessionHash.setupHash(headerAndPayload: frame.headerAndPayload),
                                   isRelayOnly: !checked.1.contains(context.nodeIndex))
        return (setup, Array(frames.dropFirst()))
    }

    private static func rejection(_ error: SessionError) -> SetupRejection {
        SetupRejection(error.code ?? .malformed,
                       detail: error.code == .unsupportedVersion ? SessionConstants.unsupportedVersionDetail : [])
    }

    /// `params` is the hex key id for operations on an existing key and nil otherwise (session.md §2.1). Hex is
    /// compared case-insensitively (session.md §0).
    private static func checkParams(_ params: String?, keyID: KeyID?, operation: SessionOperation,
                                    isExportPost: Bool) throws(SetupRejection) {
        switch (params, keyID) {
        case (nil, nil): return
        // session.md §2.1: the SDK passes nil for import although its SETUP names the (new) key id. The duo
        // export POST comes from the app's backend, whose URL may omit the hint (session.md §13.3 item 3).
        case (nil, _?) where operation == .import || isExportPost: return
        case (let text?, let id?):
            guard let decoded = try? Hex.decode(text), decoded == id.bytes else { throw SetupRejection(.routeMismatch) }
        default: throw SetupRejection(.routeMismatch)
        }
    }
}

/// The per-operation field table of session.md §4.2 and the content rules of session.md §4.3 step 8.
enum SetupFieldRules {
    typealias Presence = SetupFieldPresence

    /// Per operation, the presence of 0x0C–0x15 (and 0x09 in trio); everything not listed is forbidden.
    static func presence(_ operation: SessionOperation, mode: SessionMode) -> [UInt8: Presence] {
        typealias T = SetupPayload.Tag
        var table = operation.row.setupFields
        // group_id exists only in trio (clarification: forbidden in duo).
        if mode == .duo { table[T.groupID] = nil }
        return table
    }

    static func check(_ payload: SetupPayload, mode: SessionMode, algorithm: SessionAlgorithm,
                      operation: SessionOperation, isExportPost: Bool,
                      nodeIndex: PartyIndex) throws(SessionError) -> (SessionPublicKeys?, PartySet, PartySet?) {
        typealias T = SetupPayload.Tag
        // Presence.
        var table = presence(operation, mode: mode)
        table[T.sessionKeys] = isExportPost ? .forbidden : .required
        let present = payload.presentOptionalTags
        for tag in SetupPayload.operationTags {
            switch table[tag] ?? .forbidden {
            case .required: guard present.contains(tag) else { throw .invalidParameter }
            case .forbidden: guard !present.contains(tag) else { throw .invalidParameter }
            case .optional: break
            }
        }
        // Threshold.
        guard payload.threshold == [mode.threshold.n, mode.threshold.t] else { throw .invalidParameter }
        // Participants.
        let participants = try PartySet(bytes: payload.participants)
        let all = mode.allParties
        switch operation.row.participants {
        case .appAndOneSigner:
            let allowedSigners: [PartyIndex] = mode == .duo ? [1] : [1, 2]
            guard participants.count == 2, participants.parties.first == 0,
                  let signer = participants.parties.last, allowedSigners.contains(signer)
            else { throw .invalidParameter }
        case .everyone:
            guard participants == all else { throw .invalidParameter }
        }
        // The validating node participates, except trio node A relaying a {0, 2} session (session.md §6.1 rule 3).
        guard participants.contains(nodeIndex) || (mode == .trio && nodeIndex == 1) else { throw .invalidParameter }
        // Session keys.
        let sessionKeys = try payload.sessionKeys.map { bytes throws(SessionError) in try SessionPublicKeys(bytes: bytes) }
        // Holders.
        var holders: PartySet?
        if let bytes = payload.holders {
            let set = try PartySet(bytes: bytes)
            guard set.isSubset(of: participants), set.count >= Int(mode.threshold.t) else { throw .invalidParameter }
            if operation == .recover { guard set == PartySet([1, 2]) else { throw .invalidParameter } }
            holders = set
        }
        // Path.
        if let bytes = payload.path {
            let path = try DerivationPathBytes(bytes: bytes)
            switch operation.row.path {
            case .soft: guard path.isSoft else { throw .invalidParameter }
            case .notEmpty: guard !path.indices.isEmpty else { throw .invalidParameter }
            case .any: break
            }
        }
        // Message.
        if let message = payload.message {
            switch algorithm {
            case .ecdsa: guard message.count == SessionConstants.ecdsaMessageByteCount else { throw .invalidParameter }
            case .eddsa: guard message.count <= SessionConstants.maximumEdDSAMessageByteCount else { throw .invalidParameter }
            }
        }
        // Public key (must decode as a point of the algorithm's group).
        if let key = payload.publicKey {
            switch algorithm {
            case .ecdsa:
                guard key.count == 33, (try? Secp256k1.Point(compressed: key)) != nil else { throw .invalidParameter }
            case .eddsa:
                guard key.count == 32, (try? Ed25519.Point(bytes: key)) != nil else { throw .invalidParameter }
            }
        }
        // Export key: an X25519 key; reject the all-zero encoding outright.
        if let key = payload.exportKey, key.allSatisfy({ $0 == 0 }) { throw .invalidParameter }
        // app_state, presign_ttl, client_info.
        if let state = payload.appState { _ = try AppState(bytes: state) }
        if let ttl = payload.presignTTL, ttl == 0 { throw .invalidParameter }
        if let info = payload.clientInfo, String(validating: info, as: UTF8.self) == nil { throw .invalidParameter }
        return (sessionKeys, participants, holders)
    }
}
