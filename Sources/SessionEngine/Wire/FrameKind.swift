import MPCProtocols

/// Frame kinds of session version 1 (`docs/protocol/session.md` §3.2).
package enum FrameKind: UInt8, Sendable, CaseIterable {
    case setup = 0x01
    case accept = 0x02
    case reject = 0x03
    case broadcast = 0x10
    case pointToPoint = 0x11
    case ready = 0x20
    case commit = 0x21
    case outcome = 0x22
    case abort = 0x23
    case done = 0x24
    case stored = 0x25
    case finalRequest = 0x30
    case finalResponse = 0x31
    case exportResponse = 0x32
    /// The app asks node X which of its presignatures X still holds (session.md §8.6, protocol v1.2).
    case presigQuery = 0x33
    /// X's signed answer to a PRESIG_QUERY (session.md §8.6).
    case presigStatus = 0x34
    case linkOpen = 0x40
    case peerStatus = 0x41

    /// How a frame of this kind is authenticated.
    package enum Authenticator: Sendable, Equatable {
        /// The app's device key, label `setup`.
        case deviceKey
        /// A node's long-term key under the given label.
        case nodeKey(SigningLabel)
        /// The sender's session Ed25519 key, label `frame`.
        case sessionKey
        /// ChaCha20-Poly1305 under the point-to-point key (session.md §3.3).
        case pointToPoint
        /// XChaCha20-Poly1305 under a preSignFinal key (session.md §8.4).
        case final
        /// Nothing in the frame: an HTTP POST authorized by its bearer token alone (PRESIG_QUERY, session.md §8.6,
        /// which reveals and changes nothing the token's holder could not learn otherwise).
        case bearerToken
    }

    package var authenticator: Authenticator {
        switch self {
        case .setup: return .deviceKey
        case .accept: return .nodeKey(.accept)
        case .reject: return .nodeKey(.reject)
        case .exportResponse: return .nodeKey(.export)
        case .presigStatus: return .nodeKey(.status)
        case .presigQuery: return .bearerToken
        case .linkOpen, .peerStatus: return .nodeKey(.link)
        case .broadcast, .ready, .commit, .outcome, .abort, .done, .stored: return .sessionKey
        case .pointToPoint: return .pointToPoint
        case .finalRequest, .finalResponse: return .final
        }
    }

    /// Whether frames of this kind carry a per-stream `seq` (session.md §3.4); unsequenced kinds have seq 0.
    package var isSequenced: Bool {
        switch self {
        case .reject, .finalRequest, .finalResponse, .exportResponse, .linkOpen, .peerStatus, .presigQuery, .presigStatus:
            return false
        default: return true
        }
    }

    /// Whether the kind carries a protocol message tag (every other kind has tag 0).
    package var carriesProtocolTag: Bool {
        self == .broadcast || self == .pointToPoint || self == .finalRequest || self == .finalResponse
    }

    /// Maximum payload (plaintext) length.
    package var maximumPayloadByteCount: Int {
        switch self {
        case .setup, .broadcast: return 65_536
        case .accept, .peerStatus: return 4_096
        case .reject, .abort, .finalResponse, .exportResponse: return 1_024
        case .pointToPoint: return 131_072
        case .ready, .commit, .outcome, .done, .stored: return 256
        case .finalRequest: return 40_960
        case .linkOpen: return 16_384
        case .presigQuery: return PresignatureQueryPayload.maximumByteCount
        case .presigStatus: return PresignatureStatusPayload.maximumByteCount
        }
    }

    /// Bytes after the payload (signature or AEAD tag) and before it (FINAL nonce).
    var trailerByteCount: Int {
        switch authenticator {
        case .deviceKey, .nodeKey, .sessionKey: return 64
        case .pointToPoint, .final: return 16
        case .bearerToken: return 0
        }
    }
    var prefixByteCount: Int { authenticator == .final ? 24 : 0 }

    /// Whether `sender → receiver` is a combination session.md §3.2 lists for this kind (parties 0 = app,
    /// 1 = node / node A, 2 = node B; 0xFF = every participant). Mode-specific restrictions (e.g. no
    /// party 2 in duo) are checked against the session's participants (session.md §3.5 step 2).
    package func allows(sender: PartyIndex, receiver: PartyIndex) -> Bool {
        let app: PartyIndex = 0
        let all = FrameHeader.everyParticipant
        func isNode(_ p: PartyIndex) -> Bool { p == 1 || p == 2 }
        func isParty(_ p: PartyIndex) -> Bool { p <= 2 }
        switch self {
        case .setup: return sender == app && (receiver == all || receiver == 1)
        case .accept: return isNode(sender) && receiver == all
        case .reject, .outcome, .stored, .finalResponse: return isNode(sender) && receiver == app
        case .broadcast, .abort: return isParty(sender) && receiver == all
        case .pointToPoint: return isParty(sender) && isParty(receiver) && sender != receiver
        case .ready, .linkOpen, .peerStatus: return isNode(sender) && isNode(receiver) && sender != receiver
        case .commit, .done: return sender == app && receiver == all
        case .finalRequest, .presigQuery: return sender == app && isNode(receiver)
        case .presigStatus: return isNode(sender) && receiver == app
        case .exportResponse: return sender == 1 && receiver == app
        }
    }
}
