/// A u16 error code as carried by REJECT and ABORT (`docs/protocol/session.md` §10). A struct, not an enum,
/// because a peer of a later version may send codes this version does not know; those map to their
/// class (high byte) and the class's default retry.
package struct WireCode: RawRepresentable, Hashable, Sendable {
    package let rawValue: UInt16
    package init(rawValue: UInt16) { self.rawValue = rawValue }

    // 0x01xx frame / transport
    package static let malformed = WireCode(rawValue: 0x0101)
    package static let unsupportedVersion = WireCode(rawValue: 0x0102)
    package static let unknownField = WireCode(rawValue: 0x0103)
    package static let tooLarge = WireCode(rawValue: 0x0104)
    package static let unexpected = WireCode(rawValue: 0x0105)
    package static let sequence = WireCode(rawValue: 0x0106)
    package static let badAuthenticator = WireCode(rawValue: 0x0107)
    package static let routeMismatch = WireCode(rawValue: 0x0108)
    package static let timeout = WireCode(rawValue: 0x0109)
    package static let peerUnavailable = WireCode(rawValue: 0x010A)
    // 0x02xx authentication and authorization
    package static let authRequired = WireCode(rawValue: 0x0201)
    package static let authInvalid = WireCode(rawValue: 0x0202)
    package static let forbidden = WireCode(rawValue: 0x0203)
    package static let deviceSignatureInvalid = WireCode(rawValue: 0x0204)
    package static let deviceNotRegistered = WireCode(rawValue: 0x0205)
    package static let staleTimestamp = WireCode(rawValue: 0x0206)
    package static let replay = WireCode(rawValue: 0x0207)
    package static let banned = WireCode(rawValue: 0x0208)
    package static let rateLimited = WireCode(rawValue: 0x0209)
    package static let wrongCluster = WireCode(rawValue: 0x020A)
    // 0x03xx key state
    package static let keyNotFound = WireCode(rawValue: 0x0301)
    package static let keyExists = WireCode(rawValue: 0x0302)
    package static let staleGeneration = WireCode(rawValue: 0x0303)
    package static let keyBusy = WireCode(rawValue: 0x0304)
    package static let reconcileRequired = WireCode(rawValue: 0x0305)
    package static let presigNotFound = WireCode(rawValue: 0x0306)
    package static let presigConsumed = WireCode(rawValue: 0x0307)
    package static let presigExpired = WireCode(rawValue: 0x0308)
    package static let presignLimit = WireCode(rawValue: 0x0309)
    package static let reconcileConflict = WireCode(rawValue: 0x030A)
    /// A hard-derived child retired by its parent's refresh or recover (spec proposal P7); detail
    /// ``KeyRetiredDetail``.
    package static let keyRetired = WireCode(rawValue: 0x030B)
    /// The app's generation is none the node knows (not its CURRENT or PREPARED, not in its decision
    /// log): the node is behind the app, e.g. its database was restored from a backup older than the key's
    /// last refresh (second security review finding 1). An operator case: the app keeps its share.
    package static let nodeBehind = WireCode(rawValue: 0x030C)
    // 0x04xx parameters and policy
    package static let invalidParameter = WireCode(rawValue: 0x0401)
    package static let unsupportedOperation = WireCode(rawValue: 0x0402)
    package static let policyDenied = WireCode(rawValue: 0x0403)
    package static let signerUnavailable = WireCode(rawValue: 0x0404)
    // 0x05xx protocol outcome
    package static let abort = WireCode(rawValue: 0x0501)
    package static let abortAndBan = WireCode(rawValue: 0x0502)
    package static let signatureFailed = WireCode(rawValue: 0x0503)
    package static let resultMismatch = WireCode(rawValue: 0x0504)
    package static let rollback = WireCode(rawValue: 0x0505)
    package static let cancelled = WireCode(rawValue: 0x0506)
    // 0x06xx node
    package static let internalError = WireCode(rawValue: 0x0601)
    package static let overloaded = WireCode(rawValue: 0x0602)
    package static let storageFailure = WireCode(rawValue: 0x0603)

    /// Every code session version 1 defines, with its spec name.
    package static let known: [WireCode: String] = [
        .malformed: "MALFORMED", .unsupportedVersion: "UNSUPPORTED_VERSION", .unknownField: "UNKNOWN_FIELD",
        .tooLarge: "TOO_LARGE", .unexpected: "UNEXPECTED", .sequence: "SEQUENCE",
        .badAuthenticator: "BAD_AUTHENTICATOR", .routeMismatch: "ROUTE_MISMATCH", .timeout: "TIMEOUT",
        .peerUnavailable: "PEER_UNAVAILABLE", .authRequired: "AUTH_REQUIRED", .authInvalid: "AUTH_INVALID",
        .forbidden: "FORBIDDEN", .deviceSignatureInvalid: "DEVICE_SIGNATURE_INVALID",
        .deviceNotRegistered: "DEVICE_NOT_REGISTERED", .staleTimestamp: "STALE_TIMESTAMP", .replay: "REPLAY",
        .banned: "BANNED", .rateLimited: "RATE_LIMITED", .wrongCluster: "WRONG_CLUSTER",
        .keyNotFound: "KEY_NOT_FOUND", .keyExists: "KEY_EXISTS", .staleGeneration: "STALE_GENERATION",
        .keyBusy: "KEY_BUSY", .reconcileRequired: "RECONCILE_REQUIRED", .presigNotFound: "PRESIG_NOT_FOUND",
        .presigConsumed: "PRESIG_CONSUMED", .presigExpired: "PRESIG_EXPIRED", .presignLimit: "PRESIGN_LIMIT",
        .reconcileConflict: "RECONCILE_CONFLICT", .keyRetired: "KEY_RETIRED", .nodeBehind: "NODE_BEHIND", .invalidParameter: "INVALID_PARAMETER",
        .unsupportedOperation: "UNSUPPORTED_OPERATION", .policyDenied: "POLICY_DENIED",
        .signerUnavailable: "SIGNER_UNAVAILABLE", .abort: "ABORT", .abortAndBan: "ABORT_AND_BAN",
        .signatureFailed: "SIGNATURE_FAILED", .resultMismatch: "RESULT_MISMATCH", .rollback: "ROLLBACK",
        .cancelled: "CANCELLED", .internalError: "INTERNAL", .overloaded: "OVERLOADED",
        .storageFailure: "STORAGE_FAILURE",
    ]

    /// The spec name, or `UNKNOWN_0xNNNN`.
    package var name: String {
        Self.known[self] ?? "UNKNOWN_0x" + String(rawValue, radix: 16, uppercase: true)
    }

    /// Whether session version 1 defines this code.
    package var isKnown: Bool { Self.known[self] != nil }

    /// The code's class (its high byte).
    package var errorClass: ErrorClass {
        ErrorClass(rawValue: UInt8(rawValue >> 8)) ?? .unknown
    }

    /// Error classes (session.md §10).
    package enum ErrorClass: UInt8, Sendable {
        case frame = 0x01, authentication = 0x02, keyState = 0x03, parameters = 0x04, protocolOutcome = 0x05
        case node = 0x06
        case unknown = 0x00

        /// The class's default retry, used for codes this version does not know.
        package var defaultRetry: Retry {
            switch self {
            case .frame, .protocolOutcome: return .newSession
            case .node: return .delay
            case .authentication, .keyState, .parameters, .unknown: return .no
            }
        }
    }

    /// What may make a later attempt succeed (session.md §10 column "retry").
    package enum Retry: Sendable, Equatable {
        /// A fresh session may succeed at once.
        case newSession
        /// After `retry_after` or back-off.
        case delay
        /// After reconcile.
        case reconcile
        /// Only with a different input, credential or operator action.
        case no
    }

    /// The retry rule of the session.md §10 table (class default for unknown codes).
    package var retry: Retry {
        switch self {
        case .malformed, .unexpected, .sequence, .badAuthenticator, .timeout, .staleTimestamp, .replay,
             .signerUnavailable, .abort, .signatureFailed, .resultMismatch, .cancelled:
            return .newSession
        case .peerUnavailable, .rateLimited, .keyBusy, .presignLimit, .internalError, .overloaded, .storageFailure:
            return .delay
        case .staleGeneration, .reconcileRequired:
            return .reconcile
        case .unsupportedVersion:
            return .no   // only after an authenticated downgrade (session.md §11), which the caller decides
        default:
            return isKnown ? .no : errorClass.defaultRetry
        }
    }
}

extension WireCode: CustomStringConvertible {
    package var description: String { name }
}
