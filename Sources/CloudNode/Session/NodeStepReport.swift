import SilentShardCore

/// How a node step ended (for logs, metrics and tests; no secrets).
package enum NodeStepReport: Sendable, Equatable {
    /// The SETUP was refused with this code (REJECT sent, or B's REJECT relayed).
    case rejected(WireCode)
    /// Node A relayed a session it does not take part in (S = {0, 2}); `completed` says whether the
    /// app's DONE passed through.
    case relayed(completed: Bool)
    /// A share-changing step committed this key id and generation (PREPARED → CURRENT).
    case committed(keyId: String, gen: Generation)
    /// The staged result was dropped (tombstone aborted) on the app's or the other node's ABORT.
    case aborted(keyId: String, gen: Generation)
    /// READY was sent but the commit condition never held: the share stays PREPARED (session.md §7.5).
    case inDoubt(keyId: String, gen: Generation)
    /// A signing step finished; `confirmed` says whether the app's DONE carried the same signature.
    case signed(confirmed: Bool)
    /// A preSign step stored this node's presignature half (STORED sent).
    case presignatureStored(keyId: String)
    /// An export step sent this node's share to the app; `confirmed` says whether the app's DONE came.
    case exported(keyId: String, confirmed: Bool)
    /// A reconcile ended: with the app's DONE (`outcome` nil), or its COMMIT / rollback answered
    /// with this decision.
    case reconciled(keyId: String, outcome: CommitDecision?)
    /// The step ended without a result.
    case failed(SilentShardError)
}
