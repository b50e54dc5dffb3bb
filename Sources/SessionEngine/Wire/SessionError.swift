import MPCCrypto
import MPCProtocols

/// Every failure of the session layer (`docs/protocol/session.md` §10). Cases carry a wire code, the party to
/// blame where one is known, and never secret values.
///
/// * `detected`: this party found the problem (frame checks session.md §3.5, SETUP validation session.md §4.3, a protocol
///   failure). The code is what this party puts into its REJECT or ABORT. Frame-check failures
///   (steps 1–5 of session.md §3.5) never blame anyone: the bytes are unauthenticated.
/// * `reported`: another party told us, in a REJECT or ABORT. `authenticated` says whether its
///   signature verified; an unauthenticated report MUST NOT cause a downgrade, clock adjustment or ban.
/// * `cloudVerificationFailed`: an ACCEPT, certificate or node signature did not check out (app-local).
/// * `invalidConfiguration`: the caller's configuration is unusable (e.g. `cloudVerifyingKey`).
package enum SessionError: Error, Equatable, Sendable {
    case detected(WireCode, blamed: PartyIndex?)
    case reported(WireCode, by: PartyIndex, blamed: PartyIndex?, authenticated: Bool)
    /// A REJECT with a nonzero `retry_after_s` (session.md §4.5; RATE_LIMITED, OVERLOADED, …): the node says when
    /// a new session may succeed. Otherwise like `reported` (no blame).
    case retryLater(WireCode, afterSeconds: UInt32, by: PartyIndex, authenticated: Bool)
    /// An **authenticated** STALE_TIMESTAMP REJECT (session.md §4.5, §9.6) with the node's time (ms since the
    /// epoch): the app MAY retry once with a timestamp corrected by it (session.md §5.3).
    case nodeClock(UInt64, by: PartyIndex)
    /// An **authenticated** KEY_RETIRED REJECT (spec proposal P7) with its detail: the key was a
    /// hard-derived child its parent's refresh or recover retired; derive it again from the parent.
    case keyRetired(KeyRetiredDetail, by: PartyIndex)
    case cloudVerificationFailed(CloudVerificationFailure)
    case invalidConfiguration(ConfigurationIssue)

    /// Why an ACCEPT, REJECT or certificate from a node was not trusted (session.md §1.3, §4.4).
    package enum CloudVerificationFailure: String, Sendable {
        case malformedCertificate, certificateVersion, certificateSignature, certificateRole
        case certificateNotYetValid, certificateExpired, certificateValidityTooLong, certificateKeyIsClusterKey
        case certificateGroupMismatch, duplicateNodeKey, certificateMissing, certificateKeyMismatch
        case nodeKeyMismatch, setupHashMismatch, nodeSignature, unexpectedAccept
    }

    /// Configuration problems the initiator raises before any connection.
    package enum ConfigurationIssue: String, Sendable {
        /// `cloudVerifyingKey` is not exactly 64 hex characters of a valid Ed25519 public key.
        case cloudVerifyingKey
        /// A timestamp window outside 30–600 s.
        case timestampWindow
    }

    /// The wire code (nil for app-local failures that have none).
    package var code: WireCode? {
        switch self {
        case .detected(let code, _), .reported(let code, _, _, _), .retryLater(let code, _, _, _): return code
        case .nodeClock: return .staleTimestamp
        case .keyRetired: return .keyRetired
        case .cloudVerificationFailed, .invalidConfiguration: return nil
        }
    }

    /// The code this party puts into its ABORT for this error: the wire code, BAD_AUTHENTICATOR for
    /// a failed cloud verification, INTERNAL for a configuration problem.
    package var abortCode: WireCode {
        switch self {
        case .detected(let code, _), .reported(let code, _, _, _), .retryLater(let code, _, _, _): return code
        case .nodeClock: return .staleTimestamp
        case .keyRetired: return .keyRetired
        case .cloudVerificationFailed: return .badAuthenticator
        case .invalidConfiguration: return .internalError
        }
    }

    /// The party to blame, if known.
    package var blamedParty: PartyIndex? {
        switch self {
        case .detected(_, let blamed), .reported(_, _, let blamed, _): return blamed
        case .retryLater, .nodeClock, .keyRetired, .cloudVerificationFailed, .invalidConfiguration: return nil
        }
    }

    /// Whether the blamed party must be banned: only this party's own AbortAndBan (session.md §9.4) — never a
    /// report from another party, never unauthenticated bytes.
    package var requiresBan: Bool {
        if case .detected(.abortAndBan, let blamed) = self { return blamed != nil }
        return false
    }

    /// The retry rule (session.md §10).
    package var retry: WireCode.Retry {
        switch self {
        case .detected(let code, _), .reported(let code, _, _, _), .retryLater(let code, _, _, _): return code.retry
        case .nodeClock: return WireCode.staleTimestamp.retry
        case .keyRetired, .cloudVerificationFailed, .invalidConfiguration: return .no
        }
    }

    /// The ABORT a party sends for a protocol failure (session.md §3.5 step 6, dkls23.md §7): Abort(j) → ABORT,
    /// AbortAndBan(j) → ABORT_AND_BAN, Fail(j) → SIGNATURE_FAILED, the caller's own bad input →
    /// INVALID_PARAMETER (no blame). The reason stays local (logs), it is not a wire field.
    package init(_ error: ProtocolError) {
        switch error {
        case .abort(let party, _): self = .detected(.abort, blamed: party)
        case .abortAndBan(let party, _): self = .detected(.abortAndBan, blamed: party)
        case .signingFailed(let party, _): self = .detected(.signatureFailed, blamed: party)
        case .invalidInput: self = .detected(.invalidParameter, blamed: nil)
        }
    }
}

extension SessionError: CustomStringConvertible {
    /// Code name, blamed party and origin; never secret values.
    package var description: String {
        func party(_ index: PartyIndex?) -> String { index.map { " (blamed party \($0))" } ?? "" }
        switch self {
        case .detected(let code, let blamed):
            return "session error \(code.name)\(party(blamed))"
        case .reported(let code, let by, let blamed, let authenticated):
            return "party \(by) reported \(code.name)\(party(blamed))\(authenticated ? "" : " [unauthenticated]")"
        case .retryLater(let code, let seconds, let by, let authenticated):
            return "party \(by) reported \(code.name), retry after \(seconds) s\(authenticated ? "" : " [unauthenticated]")"
        case .nodeClock(let time, let by):
            return "party \(by) reported STALE_TIMESTAMP (node time \(time) ms)"
        case .keyRetired(let detail, let by):
            return "party \(by) reported KEY_RETIRED (derive again from parent \(detail.parentKeyID.hex) along \(detail.pathText))"
        case .cloudVerificationFailed(let reason):
            return "cloud verification failed: \(reason.rawValue)"
        case .invalidConfiguration(let issue):
            return "invalid configuration: \(issue.rawValue)"
        }
    }
}

extension SessionError {
    /// The unblamed `detected` errors of the frame and payload decoders.
    package static let malformed = SessionError.detected(.malformed, blamed: nil)
    package static let unexpected = SessionError.detected(.unexpected, blamed: nil)
    package static let badAuthenticator = SessionError.detected(.badAuthenticator, blamed: nil)
    package static let tooLarge = SessionError.detected(.tooLarge, blamed: nil)
    package static let invalidParameter = SessionError.detected(.invalidParameter, blamed: nil)
}
