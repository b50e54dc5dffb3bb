import MPCProtocols
import SilentShardCore

/// `docs/protocol/session.md` §7.2 at a node, as a pure state machine: events in (frames, the store's results),
/// actions out (prepare, send READY, wait, commit, drop, answer). ``NodeCommitExecutor`` performs them.
///
/// Two policies. **Duo** commits directly: the app's COMMIT(D) must match this node's own result, then
/// one commit transaction and OUTCOME(committed); a mismatch is RESULT_MISMATCH and a failed
/// transaction is definitive (nothing was promised). **Trio** prepares first: stage PREPARED with D,
/// send READY(D) to the other node, then commit once the app's COMMIT(D) and the other node's READY(D)
/// are both in (in either order). An ABORT from the other node before its READY, or from the app before
/// its COMMIT, means that party promised never to stage or commit this result (session.md §7.2 rule 4): the
/// PREPARED share is dropped (tombstoned) and OUTCOME(aborted) sent. Anything else after READY went out
/// leaves the share PREPARED: in doubt, settled by reconcile (session.md §7.3, §7.5).
package struct NodeCommit: Sendable, Equatable {
    package enum Policy: Sendable, Equatable {
        /// Duo: commit directly on the app's COMMIT.
        case direct
        /// Trio: prepare, exchange READY with `other`, commit on COMMIT + READY.
        case prepared(other: PartyIndex)
    }

    package enum Event: Sendable, Equatable {
        /// The PREPARED share is durable (trio).
        case prepared
        /// READY(D) went out (trio).
        case readySent
        /// The app's COMMIT (nil: it did not decode).
        case commit(CommitPayload?)
        /// The other node's READY (nil: it did not decode; trio).
        case ready(ReadyPayload?)
        /// An authenticated ABORT from `from`; `error` is what the step reports. `readyArrived`: the other
        /// node's READY came before it (in the same message), so that node's ABORT promises nothing.
        case abort(from: PartyIndex, error: SilentShardError, readyArrived: Bool = false)
        /// Sending or reading failed, or a deadline passed; `error` is what the step reports.
        case linkFailed(SilentShardError)
        /// The commit transaction (duo: commit directly; trio: PREPARED → CURRENT) succeeded.
        case storeCommitted
        /// A store call failed; `currentChanged`: CURRENT changed under a concurrent session (duo).
        case storeFailed(currentChanged: Bool)
        /// The PREPARED share was dropped (tombstone).
        case dropped
        /// A best-effort send (ABORT, OUTCOME) or the lease release is done.
        case done
    }

    package enum Action: Sendable, Equatable {
        /// Stage PREPARED with D; report `prepared` or `storeFailed`.
        case prepare
        /// Send READY(D) to the other node; report `readySent` or `linkFailed`.
        case sendReady
        /// Read until the app's COMMIT, the other node's READY or an ABORT; report it or `linkFailed`.
        case awaitFrames
        /// Run the commit transaction; report `storeCommitted` or `storeFailed`.
        case commitStore
        /// Drop the PREPARED share; report `dropped` or `storeFailed`.
        case drop
        /// Release the key's lease now that the commit is durable (duo); report `done`.
        case releaseLease
        /// Send ABORT with `code` (best effort); report `done`.
        case sendAbort(WireCode)
        /// Send OUTCOME (best effort); report `done`.
        case sendOutcome(OutcomePayload.Outcome)
        /// The commit is over.
        case end(Ending)
    }

    package enum Ending: Sendable, Equatable {
        /// Committed and answered.
        case committed
        /// The PREPARED share was dropped and OUTCOME(aborted) sent (trio).
        case aborted
        /// Nothing was stored (or promised); the step fails with `error`.
        case failed(SilentShardError)
        /// The share stays PREPARED; reconcile settles it.
        case inDoubt
    }

    private enum State: Sendable, Equatable {
        case idle, preparing, sendingReady
        case awaiting(haveCommit: Bool, haveReady: Bool)
        case committing, dropping
        /// A best-effort send, then `then`.
        indirect case finishing(then: Ending)
        case releasing
        case ended(Ending)
    }

    private let policy: Policy
    private let keyID: KeyID, gen: Generation, digest: [UInt8]
    /// The key id the SETUP named, if it named one (the COMMIT must be for it).
    private let setupKeyID: KeyID?
    private var state: State = .idle

    package init(policy: Policy, keyID: KeyID, gen: Generation, digest: [UInt8], setupKeyID: KeyID?) {
        self.policy = policy
        self.keyID = keyID
        self.gen = gen
        self.digest = digest
        self.setupKeyID = setupKeyID
    }

    /// The READY this node sends (trio).
    package var readyPayload: ReadyPayload { ReadyPayload(keyID: keyID, gen: gen, digest: digest) }

    /// The OUTCOME this node sends.
    package func outcomePayload(_ outcome: OutcomePayload.Outcome) -> OutcomePayload {
        OutcomePayload(keyID: keyID, gen: gen, digest: digest, outcome: outcome, currentGen: outcome == .committed ? gen : nil)
    }

    package mutating func start() -> Action {
        guard state == .idle else { return end(.inDoubt) }
        switch policy {
        case .direct:
            state = .awaiting(haveCommit: false, haveReady: true)
            return .awaitFrames
        case .prepared:
            state = .preparing
            return .prepare
        }
    }

    package mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.preparing, .prepared):
            state = .sendingReady
            return .sendReady
        case (.preparing, .storeFailed):
            return finish(abort: .storageFailure, then: .failed(.serviceUnavailable(retryAfter: nil)))
        case (.sendingReady, .readySent):
            state = .awaiting(haveCommit: false, haveReady: false)
            return .awaitFrames
        case (.awaiting(false, let haveReady), .commit(let payload)):
            guard let payload, payload.keyID == keyID, payload.gen == gen, payload.digest == digest,
                  payload.context == .inSession, setupKeyID.map({ $0 == keyID }) ?? true
            else {
                // Duo: nothing stored yet, RESULT_MISMATCH. Trio: PREPARED stays (in doubt).
                return policy == .direct ? finish(abort: .resultMismatch, then: .failed(.abortProtocol(party: nil))) : end(.inDoubt)
            }
            return awaited(haveCommit: true, haveReady: haveReady)
        case (.awaiting(let haveCommit, false), .ready(let payload)):
            guard let payload, payload.keyID == keyID, payload.gen == gen, payload.digest == digest else { return end(.inDoubt) }
            return awaited(haveCommit: haveCommit, haveReady: true)
        case (.awaiting(let haveCommit, let haveReadyBefore), .abort(let sender, let error, let readyArrived)):
            let haveReady = haveReadyBefore || readyArrived
            switch policy {
            case .direct:
                // The app's ABORT before its COMMIT: nothing was stored.
                return end(.failed(error))
            case .prepared(let other):
                guard (sender == other && !haveReady) || (sender == 0 && !haveCommit) else { return end(.inDoubt) }
                state = .dropping
                return .drop
            }
        case (.awaiting, .linkFailed(let error)):
            return policy == .direct ? end(.failed(error)) : end(.inDoubt)
        case (.committing, .storeCommitted):
            if policy == .direct {
                state = .releasing
                return .releaseLease
            }
            state = .finishing(then: .committed)
            return .sendOutcome(.committed)
        case (.committing, .storeFailed(let currentChanged)):
            guard policy == .direct else { return end(.inDoubt) }
            // Duo: a failed commit transaction is definitive. CURRENT changed under a concurrent session
            // (only without the lease, e.g. an expired one): STALE_GENERATION, the app keeps its old share.
            return finish(abort: currentChanged ? .staleGeneration : .storageFailure,
                          then: .failed(.serviceUnavailable(retryAfter: nil)))
        case (.releasing, .done):
            state = .finishing(then: .committed)
            return .sendOutcome(.committed)
        case (.dropping, .dropped):
            state = .finishing(then: .aborted)
            return .sendOutcome(.aborted)
        case (.finishing(let ending), .done):
            return end(ending)
        case (.sendingReady, .linkFailed):
            return end(.inDoubt)
        default:
            // Anything unexpected: in doubt once anything may be prepared; a duo node has stored nothing
            // before its commit transaction.
            if policy == .direct, state != .committing, state != .releasing {
                return end(.failed(.protocolViolation(party: .app)))
            }
            return end(.inDoubt)
        }
    }

    private mutating func awaited(haveCommit: Bool, haveReady: Bool) -> Action {
        guard haveCommit, haveReady else {
            state = .awaiting(haveCommit: haveCommit, haveReady: haveReady)
            return .awaitFrames
        }
        state = .committing
        return .commitStore
    }

    private mutating func finish(abort code: WireCode, then ending: Ending) -> Action {
        state = .finishing(then: ending)
        return .sendAbort(code)
    }

    private mutating func end(_ ending: Ending) -> Action {
        state = .ended(ending)
        return .end(ending)
    }
}
