import SessionEngine

/// A request that carries a SETUP — a WebSocket step at any node, or the duo export POST — as its admission
/// stages see it: what arrived, and what each stage found or took (`docs/protocol/session.md` §4.3).
struct SetupRequest: Sendable {
    /// The first binary message (or the POST body), decoded once.
    let parsed: ParsedSetupMessage
    let message: [UInt8]
    let context: SetupValidationContext
    /// What the server's verifier made of the token (nil: no verifier ran).
    let principal: Principal?
    /// The client's address as session.md §9.5 counts it (nil: not counted per address).
    let address: String?

    /// Set by the `validate` stage: the SETUP and the app's early frames behind it.
    var validated: (setup: ValidatedSetup, rest: [Frame])?
    /// Set by the `authorize` stage (WebSocket steps).
    var authorization: NodeStepRunner.Authorization?
    /// The key whose signing-session count this request holds (session.md §9.5), if any.
    var signingKeyID: String?
    /// The key's lease (session.md §7.2), if the operation takes one.
    var lease: KeyLease?
    /// This node's CURRENT share of the key (nil for keygen, import, reconcile and relay-only steps).
    var current: NodeKeyshare?
    /// Reconcile: the key's status at this node.
    var status: KeyStatus?

    init(message: [UInt8], context: SetupValidationContext, principal: Principal?, address: String?) {
        parsed = ParsedSetupMessage(message)
        self.message = message
        self.context = context
        self.principal = principal
        self.address = address
    }

    /// The validated SETUP; a stage placed before `validate` cannot have one (INTERNAL: a plan's mistake).
    func setup() throws(SetupRejection) -> ValidatedSetup {
        guard let validated else { throw SetupRejection(.internalError) }
        return validated.setup
    }

    /// The REJECT's binding: the validated SETUP's, else what the raw bytes name (session.md §4.5).
    var rejectBinding: (instanceID: InstanceID, setupHash: SetupHash?) {
        if let setup = validated?.setup { return (setup.instanceID, setup.setupHash) }
        return (RejectedSetup.instanceID(of: message), RejectedSetup.setupHash(of: message))
    }
}
