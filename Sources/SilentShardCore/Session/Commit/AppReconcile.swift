import MPCProtocols

/// `docs/protocol/session.md` §7.3 at the app, as a pure state machine: from the app's record (current
/// generation, staged generation and digest) and every node's signed `key_status` (in its ACCEPT),
/// decide how the record is settled, and check the nodes' answers. No I/O: actions out (send DONE,
/// COMMIT(reconcile) or ABORT(rollback), collect one OUTCOME per node, promote, discard, end), events in.
///
/// The decisions: without a staged share the nodes must hold the app's current generation (else
/// `staleKeyshare`), and trio rolls back a PREPARED generation nobody committed (an orphan). A staged
/// generation g every node already holds as current is promoted after DONE. Trio: if every node holds
/// g as current or PREPARED under the same digest, COMMIT rolls it forward. Otherwise g is rolled back
/// (every node tombstones it and answers how g was decided) and the staged share discarded; a duo node
/// that had committed g after all answers OUTCOME(committed) and the app promotes. Any other mix is
/// `reconcileConflict` (an operator case).
package struct AppReconcile: Sendable {
    package enum Policy: Sendable, Equatable {
        /// One node that never holds PREPARED (it commits in one transaction, session.md §7.2 rule 2).
        case duo
        /// Two nodes that prepare before they commit.
        case trio
    }

    package enum Action: Sendable, Equatable {
        /// Send DONE; report `sent` or `failed`.
        case sendDone
        /// Send COMMIT (reconcile context); report `sent` or `failed`.
        case sendCommit(CommitPayload)
        /// Send ABORT(rollback); report `sent` or `failed`.
        case sendRollback(AbortPayload)
        /// Read one OUTCOME from every node; report `outcomes` or `failed`.
        case awaitOutcomes
        /// Make the staged share current; report `promoted` or `failed`.
        case promote
        /// Discard the staged share; report `discarded` or `failed`.
        case discard
        /// Reconcile is over.
        case end(Ending)
    }

    package enum Ending: Sendable, Equatable {
        /// The app's current share stands.
        case current
        /// The staged share is now current.
        case staged
        /// Reconcile failed with `error` (the record is unchanged unless the error says otherwise).
        case failed(SilentShardError)
    }

    package enum Event: Sendable, Equatable {
        case sent
        case outcomes([PartyIndex: OutcomePayload])
        case promoted
        case discarded
        /// A send, read or storage call failed with `error`.
        case failed(SilentShardError)
    }

    private enum State: Sendable, Equatable {
        case idle
        case sendingDone(promote: Bool)
        case sendingCommit, awaitingCommitOutcomes
        case sendingRollback(orphan: Bool), awaitingRollbackOutcomes(orphan: Bool)
        case promoting, discarding, ended
    }

    private let policy: Policy
    private let storageKeyId: String
    private let keyID: KeyID
    private let current: Generation?
    private let staged: (gen: Generation, digest: [UInt8])?
    private var state: State = .idle

    /// Reconcile of the record `storageKeyId` (protocol key id `keyID`) whose current generation is
    /// `current` and staged one `staged` (with its digest D).
    package init(policy: Policy, storageKeyId: String, keyID: KeyID, current: Generation?,
                 staged: (gen: Generation, digest: [UInt8])?) {
        self.policy = policy
        self.storageKeyId = storageKeyId
        self.keyID = keyID
        self.current = current
        self.staged = staged
    }

    /// The first action, from every participating node's status (`nil`: the node's ACCEPT carried none).
    package mutating func start(statuses: [PartyIndex: KeyStatus?]) -> Action {
        guard state == .idle else { return end(.failed(.reconcileConflict(keyId: storageKeyId))) }
        var known: [KeyStatus] = []
        for (node, status) in statuses.sorted(by: { $0.key < $1.key }) {
            guard let status, policy == .trio || status.prepared == nil else {
                return end(.failed(.protocolViolation(party: SessionParty(index: node))))
            }
            known.append(status)
        }
        guard !known.isEmpty else { return end(.failed(.reconcileConflict(keyId: storageKeyId))) }
        guard let staged else {
            guard current != nil, known.allSatisfy({ $0.currentGen == current }) else { return end(.failed(.staleKeyshare)) }
            // A PREPARED generation no node committed and the app never staged (the app stopped before
            // staging, or its ABORT was lost) is rolled back, so share changes are possible again.
            let orphans = Set(known.compactMap { $0.prepared?.gen }.filter { $0 != current })
            guard let orphan = orphans.first else {
                state = .sendingDone(promote: false)
                return .sendDone
            }
            guard orphans.count == 1 else { return end(.failed(.reconcileConflict(keyId: storageKeyId))) }
            state = .sendingRollback(orphan: true)
            return .sendRollback(AbortPayload(code: .rollback, blamed: nil, rollback: (keyID, orphan)))
        }
        let g = staged.gen, d = staged.digest
        if known.allSatisfy({ $0.currentGen == g }) {
            state = .sendingDone(promote: true)
            return .sendDone
        }
        if policy == .trio, known.allSatisfy({ $0.currentGen == g || ($0.prepared?.gen == g && $0.prepared?.digest == d) }) {
            // Roll forward: nodes with PREPARED g commit on the app's COMMIT (no READY needed).
            state = .sendingCommit
            return .sendCommit(CommitPayload(keyID: keyID, gen: g, digest: d, context: .reconcile))
        }
        let mayRollBack = policy == .duo
            ? known.allSatisfy { $0.currentGen == current }
            : known.allSatisfy { $0.currentGen != g && ($0.currentGen == nil || $0.currentGen == current) }
        guard mayRollBack else { return end(.failed(.reconcileConflict(keyId: storageKeyId))) }
        // Roll back: every node tombstones g and answers how g was decided.
        state = .sendingRollback(orphan: false)
        return .sendRollback(AbortPayload(code: .rollback, blamed: nil, rollback: (keyID, g)))
    }

    package mutating func handle(_ event: Event) -> Action {
        if case .failed(let error) = event { return end(.failed(error)) }
        switch (state, event) {
        case (.sendingDone(let promote), .sent):
            guard promote else { return end(.current) }
            state = .promoting
            return .promote
        case (.sendingCommit, .sent):
            state = .awaitingCommitOutcomes
            return .awaitOutcomes
        case (.sendingRollback(let orphan), .sent):
            state = .awaitingRollbackOutcomes(orphan: orphan)
            return .awaitOutcomes
        case (.awaitingCommitOutcomes, .outcomes(let outcomes)):
            guard let staged, outcomes.values.allSatisfy({ $0.outcome == .committed && $0.currentGen == staged.gen }) else {
                return end(.failed(.reconcileConflict(keyId: storageKeyId)))
            }
            state = .promoting
            return .promote
        case (.awaitingRollbackOutcomes(true), .outcomes(let outcomes)):
            guard outcomes.values.allSatisfy({ $0.outcome == .aborted }) else {
                return end(.failed(.reconcileConflict(keyId: storageKeyId)))
            }
            return end(.current)
        case (.awaitingRollbackOutcomes(false), .outcomes(let outcomes)):
            guard let staged else { return end(.failed(.reconcileConflict(keyId: storageKeyId))) }
            if policy == .duo {
                guard let (node, outcome) = outcomes.first, outcomes.count == 1 else {
                    return end(.failed(.reconcileConflict(keyId: storageKeyId)))
                }
                guard outcome.keyID == keyID, outcome.gen == staged.gen else {
                    return end(.failed(.protocolViolation(party: SessionParty(index: node))))
                }
                if outcome.outcome == .committed, outcome.currentGen == staged.gen {
                    state = .promoting
                    return .promote
                }
            }
            guard outcomes.values.allSatisfy({ $0.outcome == .aborted }) else {
                return end(.failed(.reconcileConflict(keyId: storageKeyId)))
            }
            state = .discarding
            return .discard
        case (.promoting, .promoted):
            return end(.staged)
        case (.discarding, .discarded):
            return end(current == nil ? .failed(.abortedKeyshare(keyId: storageKeyId)) : .current)
        default:
            return end(.failed(.reconcileConflict(keyId: storageKeyId)))
        }
    }

    private mutating func end(_ ending: Ending) -> Action {
        state = .ended
        return .end(ending)
    }
}
