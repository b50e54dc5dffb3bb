import MPCProtocols

/// `docs/protocol/session.md` §7.2 at the app, as a pure state machine: the durability-critical decisions of
/// committing a new share, with no I/O. Events in (the storage's and the transport's results), actions
/// out (stage, send COMMIT, wait for the nodes' answers, promote, discard, end). The executor
/// (``AppCommitExecutor``) performs each action and reports its result as the next event; duo and trio
/// differ only in the nodes that must answer and in how an all-aborted answer is reported (``Policy``).
///
/// The rules it encodes: nothing is sent before the share is staged durably; after COMMIT went out only
/// definitive answers decide — every node committed (with the digest D) → promote; every node aborted
/// (OUTCOME(aborted), or its ABORT before any OUTCOME, session.md §7.2 rule 4) → discard the staged share; anything
/// else (a link failure, a timeout, an answer for another key, generation or digest, a mix of answers,
/// a failed promote) leaves the share staged: in doubt, settled by reconcile (session.md §7.3).
package struct AppCommit: Sendable, Equatable {
    /// How a mode reports a commit every node refused.
    package enum Policy: Sendable, Equatable {
        /// Duo: the node's own ABORT reason; OUTCOME(aborted) is `abortProtocol(node 1)`.
        case duo
        /// Trio: `abortProtocol` naming the party the lowest-indexed node's ABORT blamed, if any.
        case trio
    }

    /// What the executor reports.
    package enum Event: Sendable, Equatable {
        /// The staged share is durable.
        case staged
        /// Staging failed (nothing is staged).
        case stageFailed(SilentShardError)
        /// COMMIT(D) went out.
        case commitSent
        /// A node's OUTCOME (nil: it did not decode).
        case outcome(from: PartyIndex, OutcomePayload?)
        /// A node's authenticated ABORT.
        case abort(from: PartyIndex, AbortPayload)
        /// Sending or reading failed, or the step's deadline passed.
        case linkFailed
        /// The staged share is now current.
        case promoted
        /// Promoting failed (the staged share is still staged).
        case promoteFailed
        /// The staged share was discarded (or discarding failed: the record stays staged until reconcile).
        case discarded
    }

    /// What the executor does next.
    package enum Action: Sendable, Equatable {
        /// Stage the share durably; report `staged` or `stageFailed`.
        case stage
        /// Send COMMIT(D); report `commitSent` or `linkFailed`.
        case sendCommit
        /// Read until a node's OUTCOME or ABORT; report `outcome`, `abort` or `linkFailed`.
        case awaitAnswer
        /// Make the staged share current; report `promoted` or `promoteFailed`.
        case promote
        /// Discard the staged share (best effort); report `discarded`.
        case discard
        /// The commit is over.
        case end(Ending)
    }

    /// How the commit ended.
    package enum Ending: Sendable, Equatable {
        /// Every node committed and the share is current.
        case committed
        /// Nothing was committed and nothing stays staged. `sendAbort`: tell the nodes first (our own
        /// failure before COMMIT).
        case failed(SilentShardError, sendAbort: Bool)
        /// The share stays staged; only reconcile can settle it (`reconcileRequired`).
        case inDoubt
    }

    private enum State: Sendable, Equatable {
        case idle, staging, sendingCommit, awaiting, promoting, discarding(SilentShardError), ended(Ending)
    }

    private enum Answer: Sendable, Equatable {
        case committed
        /// OUTCOME(aborted), or an ABORT (with its payload).
        case aborted(AbortPayload?)
    }

    private let policy: Policy
    private let nodes: [PartyIndex]
    private let keyID: KeyID, gen: Generation, digest: [UInt8]
    private var state: State = .idle
    private var answers: [PartyIndex: Answer] = [:]

    /// A commit of the result (`keyID`, `gen`) with digest `digest` at `nodes` (duo [1]; trio the
    /// session's participating nodes).
    package init(policy: Policy, nodes: [PartyIndex], keyID: KeyID, gen: Generation, digest: [UInt8]) {
        self.policy = policy
        self.nodes = nodes.sorted()
        self.keyID = keyID
        self.gen = gen
        self.digest = digest
    }

    /// The COMMIT this commit sends (in session, session.md §4.6).
    package var commitPayload: CommitPayload { CommitPayload(keyID: keyID, gen: gen, digest: digest, context: .inSession) }

    /// Whether the commit ended.
    package var isOver: Bool { if case .ended = state { true } else { false } }

    /// The first action.
    package mutating func start() -> Action {
        guard state == .idle else { return end(.inDoubt) }
        state = .staging
        return .stage
    }

    /// The next action after `event`. An event the current state does not expect ends the commit: in
    /// doubt once anything may be staged, never with a discard.
    package mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.staging, .staged):
            state = .sendingCommit
            return .sendCommit
        case (.staging, .stageFailed(let error)):
            return end(.failed(error, sendAbort: true))
        case (.sendingCommit, .commitSent):
            state = .awaiting
            return .awaitAnswer
        case (.awaiting, .outcome(let node, let payload)):
            guard nodes.contains(node), answers[node] == nil, let payload, payload.keyID == keyID, payload.gen == gen else {
                return end(.inDoubt)
            }
            switch payload.outcome {
            case .committed where payload.digest == digest: answers[node] = .committed
            case .aborted: answers[node] = .aborted(nil)
            default: return end(.inDoubt)
            }
            return decide()
        case (.awaiting, .abort(let node, let payload)):
            // A node's ABORT before its OUTCOME is definitive: it never staged this result (session.md §7.2 rule 4).
            guard nodes.contains(node), answers[node] == nil else { return end(.inDoubt) }
            answers[node] = .aborted(payload)
            return decide()
        case (.promoting, .promoted):
            return end(.committed)
        case (.discarding(let error), .discarded):
            return end(.failed(error, sendAbort: false))
        case (.idle, _), (.ended, _):
            return end(.inDoubt)
        default:
            // sendingCommit/awaiting + linkFailed, promoting + promoteFailed, and any unexpected event.
            return end(.inDoubt)
        }
    }

    /// After an answer: wait for the rest, or decide.
    private mutating func decide() -> Action {
        guard answers.count == nodes.count else { return .awaitAnswer }
        if answers.values.allSatisfy({ $0 == .committed }) {
            state = .promoting
            return .promote
        }
        let aborts = nodes.compactMap { node -> AbortPayload?? in
            if case .aborted(let payload) = answers[node] { return .some(payload) }
            return nil
        }
        guard aborts.count == nodes.count else { return end(.inDoubt) }  // a mix: some committed
        let error: SilentShardError
        switch policy {
        case .duo:
            if let payload = aborts.first.flatMap({ $0 }), let node = nodes.first {
                error = SilentShardError(payload.sessionError(sender: node))
            } else {
                error = .abortProtocol(party: nodes.first.map { SessionParty(index: $0) })
            }
        case .trio:
            let blamed = aborts.compactMap { $0?.blamed }.first
            error = .abortProtocol(party: blamed.map { SessionParty(index: $0) })
        }
        state = .discarding(error)
        return .discard
    }

    private mutating func end(_ ending: Ending) -> Action {
        state = .ended(ending)
        return .end(ending)
    }
}
