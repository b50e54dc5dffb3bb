import SessionEngine

/// A preSignFinal POST body — a FINAL_REQUEST (`docs/protocol/session.md` §8.3–8.4) or a PRESIG_QUERY (session.md
/// §8.6) — as its admission stages see it: what arrived, and what each stage found.
struct PresignatureRequest: Sendable {
    /// What the frame is at this node, decided from its header before anything is read or verified.
    enum Kind: Sendable, Equatable {
        /// A FINAL_REQUEST for one of this node's presignatures.
        case finalRequest
        /// A PRESIG_QUERY to this node.
        case presigQuery
        /// Trio A: a FINAL_REQUEST or PRESIG_QUERY for B, relayed over a purpose-2 link (session.md §2.3).
        case relay
        /// Refused from its header (MALFORMED, UNEXPECTED), after the session.md §9.5 check of refusals.
        case refused(WireCode)
    }

    let body: [UInt8]
    /// The body as one frame (nil: it is not one; only a relayed body at B can get this far without one).
    let frame: Frame?
    /// What REJECTs bind to: the presignature id (a PRESIG_QUERY's: the query id), zeros if unreadable.
    let instanceID: InstanceID
    let kind: Kind
    /// What the verifier made of the token (nil: no verifier ran).
    let principal: Principal?
    /// The client's address as session.md §9.5 counts it (nil: not counted per address).
    let address: String?

    /// FINAL_REQUEST: the stored presignature as read without a write transaction.
    var lookup: PresignatureLookup?
    /// FINAL_REQUEST: the device the held presignature was made with (the request's device).
    var device: [UInt8]?
    /// FINAL_REQUEST: a finish record of this very request (the stored response is the answer).
    var storedResponse: [UInt8]?
    /// PRESIG_QUERY: its payload.
    var query: PresignatureQueryPayload?

    init(body: [UInt8], kind: Kind, principal: Principal?, address: String?) {
        self.body = body
        frame = try? Frame.parseSingle(body)
        instanceID = frame?.header.instanceID
            ?? (try? FrameHeader.decode(body.prefix(FrameHeader.byteCount)))?.instanceID ?? .unbound
        self.kind = kind
        self.principal = principal
        self.address = address
    }

    /// What a body is at node `party` (session.md §8.4, §8.6): its own FINAL_REQUEST or PRESIG_QUERY (sender 0,
    /// receiver this node); at trio A (`atLink` false), one for B; anything else refused. A body relayed to B
    /// over a link (`atLink`) is this node's or MALFORMED.
    static func kind(of body: [UInt8], party: NodeParty, atLink: Bool) -> Kind {
        guard let header = (try? Frame.parseSingle(body))?.header else { return .refused(.malformed) }
        if header.sender == 0, header.receiver == party.index {
            if header.kind == .presigQuery { return .presigQuery }
            if header.kind == .finalRequest { return .finalRequest }
        }
        guard !atLink, header.kind == .finalRequest || header.kind == .presigQuery, header.sender == 0 else {
            return .refused(.malformed)
        }
        guard let identity = party.trioIdentity, identity.isEntry, header.receiver == identity.peerIndex else {
            return .refused(.unexpected)
        }
        return .relay
    }
}
