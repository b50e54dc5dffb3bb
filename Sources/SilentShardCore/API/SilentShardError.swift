import Foundation
import MPCCrypto
import MPCProtocols

/// A party of a session, as errors name it.
public enum SessionParty: Sendable, Equatable, CustomStringConvertible {
    /// The app (party 0).
    case app
    /// A cloud node by party index (duo: 1; trio: 1 = node A, 2 = node B).
    case node(UInt8)

    /// The party for a protocol party index.
    public init(index: PartyIndex) { self = index == 0 ? .app : .node(index) }

    /// The protocol party index.
    public var index: PartyIndex {
        switch self {
        case .app: return 0
        case .node(let index): return index
        }
    }

    public var description: String {
        switch self {
        case .app: return "app"
        case .node(let index): return "node \(index)"
        }
    }
}

/// Every failure the SDK reports (`docs/protocol/session.md` §10): what went wrong and, where known, which
/// party is involved. Never carries secret values.
///
/// Party semantics:
/// * `malformedMessage`, `protocolViolation`, `messageAuthenticationFailed`: `party` is the sender the
///   offending frame *named* (or nil). The bytes were unauthenticated, so this says where the bad frame
///   claimed to come from — it is not proof of fault and never causes a ban (session.md §3.5).
/// * `abortProtocol`, `abortProtocolAndBanParty`, `signatureFailed`: `party` is the party the protocol
///   blamed after authenticated checks.
/// * `rejected`/`reported` forms carry the reporting node (`by`) and whether its signature verified.
public enum SilentShardError: Error, Sendable, Equatable, CustomStringConvertible {
    // Frames and protocol
    /// A frame, bundle, TLV or value could not be parsed, or was too large (MALFORMED, TOO_LARGE, session.md §10).
    case malformedMessage(party: SessionParty?)
    /// A message arrived that the protocol does not allow now: wrong kind, tag or sender, a duplicate,
    /// or a gap or reorder in a stream (UNEXPECTED, SEQUENCE).
    case protocolViolation(party: SessionParty?)
    /// A frame's signature or AEAD tag did not verify (BAD_AUTHENTICATOR).
    case messageAuthenticationFailed(party: SessionParty?)
    /// The protocol aborted, blaming `party` after authenticated checks (ABORT, RESULT_MISMATCH).
    case abortProtocol(party: SessionParty?)
    /// The protocol aborted with proof against `party`, which this app now bans (ABORT_AND_BAN, session.md §9.4).
    case abortProtocolAndBanParty(party: SessionParty)
    /// The protocol produced no valid signature, blaming `party` (SIGNATURE_FAILED).
    case signatureFailed(party: SessionParty?)
    /// The peer does not speak this session version, or sent a field this version does not know
    /// (UNSUPPORTED_VERSION, UNKNOWN_FIELD, session.md §11).
    case unsupportedVersion
    /// A party stayed silent past its deadline (TIMEOUT, or the app's own deadline).
    case timeout
    // Trust and authorization
    /// An ACCEPT, certificate or node signature did not verify under `cloudVerifyingKey`.
    case cloudVerificationFailed(reason: String)
    /// The node refused the token (missing, invalid or expired) or the device's SETUP signature
    /// (AUTH_REQUIRED, AUTH_INVALID, DEVICE_SIGNATURE_INVALID); `reason` says which.
    case authenticationFailed(reason: String)
    /// The token does not grant this operation on this key (FORBIDDEN: scope or owner mismatch).
    case authorizationDenied
    /// The device key is not the one registered for the key (DEVICE_NOT_REGISTERED); trio can recover.
    case deviceNotRegistered
    /// The device's clock is outside the node's window (STALE_TIMESTAMP); `nodeTime` is the node's time in
    /// milliseconds when it was authenticated. The SDK corrects its clock and retries once by itself.
    case clockSkew(nodeTime: UInt64?)
    /// The node has seen this session's instance id before (REPLAY).
    case replayDetected
    /// A party is banned: this app banned node `party` (session.md §9.4: it failed a check this app made; only
    /// reconcile and export still run with it), or, on a node, the app's device is banned (`.app`).
    case partyBanned(party: SessionParty?)
    /// Node `by` banned this app's device (REJECT/ABORT BANNED, session.md §9.4): it refuses every operation of this
    /// device until its operator lifts the ban. Not a reason to try another node (in trio A relays every
    /// step and refuses it too). Protocol v1.3 (`spec-proposals.md` P4); before, `partyBanned(node)`.
    case deviceBanned(by: SessionParty?)
    /// A node's rate limit or presignature quota was reached (RATE_LIMITED, PRESIGN_LIMIT); retry after
    /// `retryAfter` seconds when given.
    case rateLimited(retryAfter: UInt32?)
    // Key state
    /// No such key at the node (KEY_NOT_FOUND), or no record of it in the app's `StorageClient`.
    case keyNotFound(keyId: String?)
    /// The key is a hard-derived child its parent's refresh or recover retired (its shares lay on the
    /// parent's old generation): derive it again with `hardDerivation(keyshare: parent, path: path)` from
    /// the parent's current keyshare — the same public key and key id. `parentKeyId` and `path` come from
    /// an authenticated node answer; nil when the answer did not carry them.
    case keyRetired(keyId: String?, parentKeyId: String?, path: String?)
    /// Keygen or import named a key id that already exists (KEY_EXISTS).
    case keyAlreadyExists
    /// The keyshare's generation is not the nodes' current one (STALE_GENERATION) and reconcile did not
    /// bring it up to date: use the current keyshare from storage.
    case staleKeyshare
    /// The node is behind this app (NODE_BEHIND): it does not know the keyshare's generation at all — not
    /// its current or prepared one, not one it ever decided — typically because its operator restored its
    /// database from a backup older than the key's last refresh. An operator case: the app's share is
    /// kept as it is (never discard or replace it because of this error); tell the operator (the node must
    /// be restored to a newer backup) and retry later. `keyId` is the key's id when the SDK knows it.
    case nodeBehind(keyId: String?)
    /// Another share-changing session holds the key's lease (KEY_BUSY); the SDK backs off and retries a
    /// few times before reporting it.
    case keyBusy
    /// A share change is in doubt: call `reconcileKeyshare(keyId:)`.
    case reconcileRequired(keyId: String)
    /// The parties' generations of the key disagree in a way reconcile cannot settle (RECONCILE_CONFLICT,
    /// session.md §7.3): nothing was changed; an operator must look.
    case reconcileConflict(keyId: String)
    /// Reconcile rolled back the first generation of a key: there is no key.
    case abortedKeyshare(keyId: String)
    /// A backup holds `generation` (32 bytes) of key `keyId`, which is no longer the key's current
    /// generation (at this app, or at the nodes): its share cannot sign. Restore a newer backup, or
    /// (trio) recover with the nodes.
    case staleBackup(keyId: String, generation: Data)
    // Parameters and node
    /// A parameter was refused before or by the node: a bad path, message, party set, threshold or point
    /// (INVALID_PARAMETER); `reason` says which, without secret values.
    case invalidInput(reason: String)
    /// The keyshare passed in is unusable here (wrong algorithm, mode or encoding); `reason` says why.
    case invalidKeyshare(reason: String)
    /// The session's configuration is unusable (for example a malformed `cloudVerifyingKey`).
    case invalidConfiguration(reason: String)
    /// The operation is not offered in this mode, algorithm or node role (UNSUPPORTED_OPERATION).
    case unsupportedOperation
    /// The node operator's policy refused the operation or message (POLICY_DENIED).
    case policyDenied
    /// A needed party cannot be reached: in trio node A cannot reach B, or no signer is available
    /// (PEER_UNAVAILABLE, SIGNER_UNAVAILABLE).
    case peerUnavailable(party: SessionParty?)
    /// No such presignature at its node (never stored, expired and collected, or its generation was
    /// refreshed away): presign again.
    case presignatureNotFound
    /// The presignature was already used with another request (or another message, at the app).
    case presignatureConsumed
    /// The presignature is past its expiry.
    case presignatureExpired
    /// The node is overloaded or failed internally (OVERLOADED, INTERNAL, STORAGE_FAILURE); retry after
    /// `retryAfter` seconds when given.
    case serviceUnavailable(retryAfter: UInt32?)
    /// The operation was cancelled, by this app's task or by a party's caller (CANCELLED).
    case cancelled
    /// A node refused or ended the session with a code this enum has no closer case for — or sent a REJECT the SDK
    /// could not authenticate (`authenticated` false: not signed by a node key the app trusts, or not bound to this
    /// request), whose code is then only reported, never taken as the outcome.
    case rejected(code: UInt16, name: String, by: SessionParty, authenticated: Bool)
    // App-local
    /// The transport failed (connect, TLS, handshake, close, timeout); retryable by the caller.
    case network(NetworkError)
    /// The app's `StorageClient` failed (its error's description; storage errors hold no secrets).
    case storage(reason: String)

    /// Maps a session-layer error. `frameSender` is the sender named by the frame that failed (for
    /// frame-level failures, which blame nobody).
    package init(_ error: SessionError, frameSender: PartyIndex? = nil) {
        switch error {
        case .nodeClock(let time, _):
            self = .clockSkew(nodeTime: time)
        case .keyRetired(let detail, _):
            self = .keyRetired(keyId: nil, parentKeyId: detail.parentKeyID.hex, path: detail.pathText)
        case .cloudVerificationFailed(let reason):
            self = .cloudVerificationFailed(reason: reason.rawValue)
        case .invalidConfiguration(let issue):
            self = .invalidConfiguration(reason: issue.rawValue)
        case .detected(let code, let blamed):
            self = Self.map(code: code, party: (blamed ?? frameSender).map(SessionParty.init(index:)), detail: [])
        case .retryLater(let code, _, let by, false), .reported(let code, let by, _, false):
            // A REJECT the app could not authenticate (signature, or binding to this request) is a report, never an
            // outcome: no typed refusal, no retry delay of the sender's choosing (session.md §4.5; security review 2).
            // WRONG_CLUSTER is the exception: it is what a node says to an app configured with another cluster's key,
            // which therefore can never authenticate it, and the typed error it maps to is itself "the app could not
            // verify the cloud" — a configuration error no SDK path acts on.
            self = code == .wrongCluster
                ? .cloudVerificationFailed(reason: "wrong cluster")
                : .rejected(code: code.rawValue, name: code.name, by: SessionParty(index: by), authenticated: false)
        case .retryLater(let code, let seconds, let by, let authenticated):
            switch Self.map(code: code, party: SessionParty(index: by), detail: []) {
            case .rateLimited: self = .rateLimited(retryAfter: seconds)
            case .serviceUnavailable: self = .serviceUnavailable(retryAfter: seconds)
            case .rejected: self = .rejected(code: code.rawValue, name: code.name, by: SessionParty(index: by), authenticated: authenticated)
            case let mapped: self = mapped
            }
        case .reported(let code, let by, let blamed, let authenticated):
            let reporter = SessionParty(index: by)
            switch code {
            case .abort, .abortAndBan, .signatureFailed, .resultMismatch:
                // Another party's ABORT: we never ban on it (session.md §6.2); report who blamed whom.
                self = .abortProtocol(party: blamed.map(SessionParty.init(index:)) ?? reporter)
            default:
                let mapped = Self.map(code: code, party: reporter, detail: [])
                if case .rejected = mapped {
                    self = .rejected(code: code.rawValue, name: code.name, by: reporter, authenticated: authenticated)
                } else {
                    self = mapped
                }
            }
        }
    }

    /// `authenticationFailed`'s reason for AUTH_INVALID (a token invalid or expired; session.md §10: retry after a
    /// new token).
    package static let invalidTokenReason = "invalid token"
    /// `authenticationFailed`'s reason when a node refused the token at the door: it closed the WebSocket
    /// with 4401 before reading the SETUP (so without a frame), or answered a POST with HTTP 401.
    package static let tokenRefusedReason = "token refused"

    /// Whether this error says a node refused the app's token (invalid or expired), which a fresh
    /// token may cure.
    package var isRefusedToken: Bool {
        if case .authenticationFailed(let reason) = self {
            return reason == Self.invalidTokenReason || reason == Self.tokenRefusedReason
        }
        return false
    }

    /// Maps a wire code (session.md §10 table; unknown codes by class).
    static func map(code: WireCode, party: SessionParty?, detail: [UInt8]) -> SilentShardError {
        switch code {
        case .malformed, .tooLarge: return .malformedMessage(party: party)
        case .unsupportedVersion, .unknownField: return .unsupportedVersion
        case .unexpected: return .protocolViolation(party: party)
        case .sequence: return .protocolViolation(party: nil)
        case .badAuthenticator: return .messageAuthenticationFailed(party: party)
        case .routeMismatch, .invalidParameter: return .invalidInput(reason: code.name)
        case .timeout: return .timeout
        case .peerUnavailable, .signerUnavailable: return .peerUnavailable(party: party)
        case .authRequired: return .authenticationFailed(reason: "missing token")
        case .authInvalid: return .authenticationFailed(reason: SilentShardError.invalidTokenReason)
        case .deviceSignatureInvalid: return .authenticationFailed(reason: "device signature")
        case .forbidden: return .authorizationDenied
        case .deviceNotRegistered: return .deviceNotRegistered
        case .staleTimestamp:
            let time = detail.count == 8 ? detail.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } : nil
            return .clockSkew(nodeTime: time)
        case .replay: return .replayDetected
        case .banned: return .deviceBanned(by: party)
        case .rateLimited, .presignLimit: return .rateLimited(retryAfter: nil)
        case .presigNotFound: return .presignatureNotFound
        case .presigConsumed: return .presignatureConsumed
        case .presigExpired: return .presignatureExpired
        case .wrongCluster: return .cloudVerificationFailed(reason: "wrong cluster")
        case .keyNotFound: return .keyNotFound(keyId: nil)
        case .keyRetired: return .keyRetired(keyId: nil, parentKeyId: nil, path: nil)
        case .keyExists: return .keyAlreadyExists
        case .staleGeneration: return .staleKeyshare
        case .nodeBehind: return .nodeBehind(keyId: nil)
        case .keyBusy: return .keyBusy
        case .unsupportedOperation: return .unsupportedOperation
        case .policyDenied: return .policyDenied
        case .abort, .resultMismatch: return .abortProtocol(party: party)
        case .abortAndBan: return party.map { .abortProtocolAndBanParty(party: $0) } ?? .abortProtocol(party: nil)
        case .signatureFailed: return .signatureFailed(party: party)
        case .cancelled: return .cancelled
        case .internalError, .overloaded, .storageFailure: return .serviceUnavailable(retryAfter: nil)
        default: return .rejected(code: code.rawValue, name: code.name, by: party ?? .node(1), authenticated: false)
        }
    }

    /// Maps a protocol failure raised by this party's own checks.
    public init(_ error: ProtocolError) { self.init(SessionError(error)) }

    /// Maps a transport failure.
    public init(_ error: NetworkError) { self = .network(error) }

    /// Maps a storage failure (the app's `StorageClient`).
    public init(storage error: any Error) { self = .storage(reason: String(describing: error)) }

    /// The party involved, where known.
    public var party: SessionParty? {
        switch self {
        case .malformedMessage(let p), .protocolViolation(let p), .messageAuthenticationFailed(let p),
             .abortProtocol(let p), .signatureFailed(let p), .partyBanned(let p), .peerUnavailable(let p), .deviceBanned(let p):
            return p
        case .abortProtocolAndBanParty(let p): return p
        case .rejected(_, _, let by, _): return by
        default: return nil
        }
    }

    public var description: String {
        func of(_ p: SessionParty?) -> String { p.map { " (party: \($0))" } ?? "" }
        switch self {
        case .malformedMessage(let p): return "malformed message\(of(p))"
        case .protocolViolation(let p): return "protocol violation\(of(p))"
        case .messageAuthenticationFailed(let p): return "message authentication failed\(of(p))"
        case .abortProtocol(let p): return "protocol aborted\(of(p))"
        case .abortProtocolAndBanParty(let p): return "protocol aborted, party banned\(of(p))"
        case .signatureFailed(let p): return "no valid signature\(of(p))"
        case .unsupportedVersion: return "unsupported session version"
        case .timeout: return "timeout"
        case .cloudVerificationFailed(let reason): return "cloud verification failed: \(reason)"
        case .authenticationFailed(let reason): return "authentication failed: \(reason)"
        case .authorizationDenied: return "authorization denied"
        case .deviceNotRegistered: return "device key not registered for this key"
        case .clockSkew(let time): return "clock skew (node time \(time.map(String.init) ?? "unknown"))"
        case .replayDetected: return "replay detected"
        case .partyBanned(let p): return "party banned\(of(p))"
        case .deviceBanned(let p): return "this device is banned\(p.map { " by \($0)" } ?? "")"
        case .rateLimited(let after): return "rate limited\(after.map { " (retry after \($0) s)" } ?? "")"
        case .keyNotFound(let keyId): return "key not found\(keyId.map { ": \($0)" } ?? "")"
        case .keyRetired(let keyId, let parentKeyId, let path):
            return "key retired\(keyId.map { ": \($0)" } ?? ""): derive it again"
                + (parentKeyId.map { " from parent \($0)" } ?? "") + (path.map { " along \($0)" } ?? "")
        case .keyAlreadyExists: return "key already exists"
        case .staleKeyshare: return "stale keyshare generation"
        case .nodeBehind(let keyId):
            return "the node is behind this app's keyshare\(keyId.map { " of key \($0)" } ?? ""): the node's operator must "
                + "restore a newer backup; the app keeps its share"
        case .keyBusy: return "key busy"
        case .reconcileRequired(let keyId): return "reconcile required for key \(keyId)"
        case .reconcileConflict(let keyId): return "reconcile conflict for key \(keyId)"
        case .abortedKeyshare(let keyId): return "keyshare aborted for key \(keyId)"
        case .staleBackup(let keyId, let generation):
            return "backup of key \(keyId) holds generation \(Hex.encode([UInt8](generation.prefix(8))))…, which is no longer current"
        case .invalidInput(let reason): return "invalid input: \(reason)"
        case .invalidKeyshare(let reason): return "invalid keyshare: \(reason)"
        case .invalidConfiguration(let reason): return "invalid configuration: \(reason)"
        case .unsupportedOperation: return "unsupported operation"
        case .policyDenied: return "policy denied"
        case .peerUnavailable(let p): return "peer unavailable\(of(p))"
        case .presignatureNotFound: return "presignature not found"
        case .presignatureConsumed: return "presignature already consumed"
        case .presignatureExpired: return "presignature expired"
        case .serviceUnavailable: return "service unavailable"
        case .cancelled: return "cancelled"
        case .rejected(let code, let name, let by, let authenticated):
            return "\(by) reported \(name) (0x\(String(code, radix: 16)))\(authenticated ? "" : " [unauthenticated]")"
        case .network(let error): return "network: \(error)"
        case .storage(let reason): return "storage: \(reason)"
        }
    }
}
