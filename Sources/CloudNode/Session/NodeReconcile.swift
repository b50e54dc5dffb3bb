import MPCProtocols
import SilentShardCore

/// `docs/protocol/session.md` §7.3 at a node, as a pure state machine. After its ACCEPT (which carries the
/// node's `key_status`) the node waits for the app's decision: DONE (nothing to do), ABORT(rollback g)
/// — tombstone g, answered with how g was decided — or, in trio, COMMIT(g, D, context reconcile), which
/// commits a PREPARED g without READY (the app saw every node's signed status). The store calls decide
/// the answers (a tombstone and a late commit of g are serialized by the store's transaction);
/// ``NodeReconcileExecutor`` performs them.
package struct NodeReconcile: Sendable, Equatable {
    package enum Policy: Sendable, Equatable {
        /// Duo: DONE or rollback (a duo node never holds PREPARED, so the app never sends COMMIT).
        case duo
        /// Trio: DONE, rollback, or COMMIT to roll a PREPARED generation forward.
        case trio
    }

    package enum Event: Sendable, Equatable {
        /// The app's DONE.
        case done
        /// The app's COMMIT (nil: it did not decode).
        case commit(CommitPayload?)
        /// The app's ABORT (its payload), or a read that failed with `error`.
        case abort(AbortPayload, error: SilentShardError)
        case failed(SilentShardError)
        /// The store carried out the decision: how the generation stands, and the current generation.
        case stored(OutcomePayload.Outcome, currentGen: Generation?)
        case storeFailed
        /// The OUTCOME went out (best effort).
        case sent
    }

    package enum Action: Sendable, Equatable {
        /// Read until the app's DONE, COMMIT or ABORT.
        case awaitDecision
        /// Commit PREPARED `gen` with `digest`; report `stored` or `storeFailed`.
        case commitStore(gen: Generation, digest: [UInt8])
        /// Tombstone `gen`; report `stored` or `storeFailed`.
        case rollbackStore(gen: Generation)
        /// Answer the app (best effort); report `sent`.
        case sendOutcome(OutcomePayload)
        case end(Ending)
    }

    package enum Ending: Sendable, Equatable {
        /// Reconciled: nil after DONE, else how the decided generation stands.
        case reconciled(CommitDecision?)
        case failed(SilentShardError)
    }

    private enum State: Sendable, Equatable {
        case idle, awaiting
        case storing(gen: Generation, digest: [UInt8], rollback: Bool)
        case answering(CommitDecision?)
        case ended
    }

    private let policy: Policy
    private let keyID: KeyID
    private var state: State = .idle

    package init(policy: Policy, keyID: KeyID) {
        self.policy = policy
        self.keyID = keyID
    }

    package mutating func start() -> Action {
        guard state == .idle else { return end(.failed(.protocolViolation(party: .app))) }
        state = .awaiting
        return .awaitDecision
    }

    package mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.awaiting, .done):
            return end(.reconciled(nil))
        case (.awaiting, .commit(let payload)):
            guard policy == .trio, let payload, payload.keyID == keyID, payload.context == .reconcile else {
                return end(.failed(.protocolViolation(party: .app)))
            }
            state = .storing(gen: payload.gen, digest: payload.digest, rollback: false)
            return .commitStore(gen: payload.gen, digest: payload.digest)
        case (.awaiting, .abort(let payload, let error)):
            guard payload.code == .rollback, let rollback = payload.rollback, rollback.keyID == keyID else {
                return end(.failed(error))
            }
            let zeros = [UInt8](repeating: 0, count: 32)
            state = .storing(gen: rollback.gen, digest: zeros, rollback: true)
            return .rollbackStore(gen: rollback.gen)
        case (.awaiting, .failed(let error)):
            return end(.failed(error))
        case (.storing(let gen, let digest, let rollback), .stored(let outcome, let currentGen)):
            let decision: CommitDecision? = switch outcome {
            case .committed: .committed
            case .aborted: .aborted
            case .inDoubt: nil
            }
            // A rollback's answer is always a decision (tombstoned, or committed before it).
            state = .answering(rollback ? (decision ?? .committed) : decision)
            return .sendOutcome(OutcomePayload(keyID: keyID, gen: gen, digest: digest, outcome: outcome, currentGen: currentGen))
        case (.storing, .storeFailed):
            return end(.failed(.serviceUnavailable(retryAfter: nil)))
        case (.answering(let decision), .sent):
            return end(.reconciled(decision))
        default:
            return end(.failed(.protocolViolation(party: .app)))
        }
    }

    private mutating func end(_ ending: Ending) -> Action {
        state = .ended
        return .end(ending)
    }
}
