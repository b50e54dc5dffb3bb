import MPCCrypto

/// A party's index in a keyshare's party list (0-based, < n ≤ 255).
public typealias PartyIndex = UInt8

/// Every failure of a protocol state machine. Cases name the party to blame where one is known and
/// never carry secret values.
///
/// The outcomes follow the failure model of the DKLs23 spec (§7), which FROST shares:
/// * `abort`: the session ends with no output; the caller may retry with a fresh instance id.
/// * `abortAndBan`: the party failed a check whose outcome can depend on our long-term secrets (a
///   selective-failure probe). The caller MUST abort every session with that party and refuse new
///   ones (`AbortProtocolAndBanParty`).
/// * `signingFailed`: a signing session ran to the end but produced no valid signature.
/// * `invalidInput`: the caller's own input is unusable (not a peer's fault).
public enum ProtocolError: Error, Equatable, Sendable {
    case abort(party: PartyIndex?, reason: Reason)
    case abortAndBan(party: PartyIndex, reason: Reason)
    case signingFailed(party: PartyIndex?, reason: Reason)
    case invalidInput(Reason)

    /// Why a session stopped.
    public enum Reason: String, Sendable {
        // Messages
        case malformedMessage, unexpectedSender, duplicateMessage, unexpectedRound, missingMessages
        // Session binding
        case sessionMismatch, transcriptMismatch
        // Checks
        case commitmentMismatch, invalidProof, invalidShare, invalidSignatureShare, publicKeyMismatch
        case otConsistencyCheckFailed, multiplicationCheckFailed, nonceConsistencyCheckFailed
        case keyConsistencyCheckFailed, messageMismatch, invalidSignature
        // Forbidden values an honest run reaches with negligible probability
        case identityPoint, zeroScalar, collidingEvaluationPoints
        // Caller input
        case invalidParameters, invalidKeyshare, unsupportedKeyshareVersion, invalidMessageHash, invalidDerivationPath
        case presignatureAlreadyUsed, presignatureMismatch, stateAlreadyConsumed
    }

    /// The party this error blames, if any.
    public var blamedParty: PartyIndex? {
        switch self {
        case .abort(let party, _), .signingFailed(let party, _): return party
        case .abortAndBan(let party, _): return party
        case .invalidInput: return nil
        }
    }

    /// Whether the caller must ban the blamed party.
    public var requiresBan: Bool {
        if case .abortAndBan = self { return true }
        return false
    }
}

extension ProtocolError: CustomStringConvertible {
    /// A short readable form: outcome, reason and blamed party (never secret values).
    public var description: String {
        func party(_ index: PartyIndex?) -> String { index.map { " (party \($0))" } ?? "" }
        switch self {
        case .abort(let blamed, let reason): return "abort: \(reason.rawValue)\(party(blamed))"
        case .abortAndBan(let blamed, let reason): return "abort and ban: \(reason.rawValue)\(party(blamed))"
        case .signingFailed(let blamed, let reason): return "signing failed: \(reason.rawValue)\(party(blamed))"
        case .invalidInput(let reason): return "invalid input: \(reason.rawValue)"
        }
    }
}
