import MPCProtocols

extension AbortPayload {
    /// The ABORT code and blame this party sends for its own failure (session.md §3.5, §10).
    package init(for error: SilentShardError) {
        switch error {
        case .abortProtocol(let party): self = AbortPayload(code: .abort, blamed: party?.index, detail: "")
        case .abortProtocolAndBanParty(let party): self = AbortPayload(code: .abortAndBan, blamed: party.index, ban: true, detail: "")
        case .signatureFailed(let party): self = AbortPayload(code: .signatureFailed, blamed: party?.index, detail: "")
        case .malformedMessage: self = AbortPayload(code: .malformed, blamed: nil, detail: "")
        case .protocolViolation: self = AbortPayload(code: .unexpected, blamed: nil, detail: "")
        case .messageAuthenticationFailed, .cloudVerificationFailed: self = AbortPayload(code: .badAuthenticator, blamed: nil, detail: "")
        case .storage: self = AbortPayload(code: .storageFailure, blamed: nil, detail: "")
        case .timeout: self = AbortPayload(code: .timeout, blamed: nil, detail: "")
        case .partyBanned, .deviceBanned: self = AbortPayload(code: .banned, blamed: nil, detail: "")
        case .keyBusy: self = AbortPayload(code: .keyBusy, blamed: nil, detail: "")
        case .invalidInput, .invalidKeyshare: self = AbortPayload(code: .invalidParameter, blamed: nil, detail: "")
        default: self = AbortPayload(code: .cancelled, blamed: nil, detail: "")
        }
    }
}
