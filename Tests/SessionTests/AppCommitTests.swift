import MPCProtocols
import SilentShardCore
import Testing

/// `AppCommit` (`docs/protocol/session.md` §7.2 at the app) without I/O: every state × every event. The
/// end-to-end oracle stays `CutEverywhereTests` (both modes).
@Suite("App commit state machine")
struct AppCommitTests {
    static let keyID = KeyID(checked: [UInt8](repeating: 0x0A, count: 32))
    static let gen = Generation(checked: [UInt8](repeating: 0x0B, count: 32))
    static let digest = [UInt8](repeating: 0x0C, count: 32)
    static let other = [UInt8](repeating: 0xEE, count: 32)

    static func outcome(_ outcome: OutcomePayload.Outcome, keyID: KeyID = keyID, gen: Generation = gen,
                        digest: [UInt8] = digest) -> OutcomePayload {
        OutcomePayload(keyID: keyID, gen: gen, digest: digest, outcome: outcome, currentGen: nil)
    }

    /// The states a commit passes through, each reached by the events that lead there.
    enum Stage: CaseIterable { case staging, sendingCommit, awaiting, awaitingAfterOneCommitted, promoting, discarding, ended }

    static func machine(_ policy: AppCommit.Policy, at stage: Stage) -> AppCommit {
        let nodes: [PartyIndex] = policy == .duo ? [1] : [1, 2]
        var m = AppCommit(policy: policy, nodes: nodes, keyID: keyID, gen: gen, digest: digest)
        _ = m.start()
        let path: [AppCommit.Event]
        switch stage {
        case .staging: path = []
        case .sendingCommit: path = [.staged]
        case .awaiting: path = [.staged, .commitSent]
        case .awaitingAfterOneCommitted: path = policy == .duo ? [.staged, .commitSent] : [.staged, .commitSent, .outcome(from: 1, outcome(.committed))]
        case .promoting: path = [.staged, .commitSent] + nodes.map { .outcome(from: $0, outcome(.committed)) }
        case .discarding: path = [.staged, .commitSent] + nodes.map { .outcome(from: $0, outcome(.aborted)) }
        case .ended: path = [.staged, .stageFailed(.storage(reason: "x"))]  // an unexpected event ends it
        }
        for event in path { _ = m.handle(event) }
        return m
    }

    /// Every event kind, with the answers of node 1 in their variants.
    static let events: [(String, AppCommit.Event)] = [
        ("staged", .staged),
        ("stageFailed", .stageFailed(.storage(reason: "disk full"))),
        ("commitSent", .commitSent),
        ("outcome committed", .outcome(from: 1, outcome(.committed))),
        ("outcome committed, other digest", .outcome(from: 1, outcome(.committed, digest: other))),
        ("outcome committed, other key", .outcome(from: 1, outcome(.committed, keyID: KeyID(checked: other)))),
        ("outcome committed, other gen", .outcome(from: 1, outcome(.committed, gen: Generation(checked: other)))),
        ("outcome aborted", .outcome(from: 1, outcome(.aborted))),
        ("outcome aborted, other gen", .outcome(from: 1, outcome(.aborted, gen: Generation(checked: other)))),
        ("outcome inDoubt", .outcome(from: 1, outcome(.inDoubt))),
        ("outcome undecodable", .outcome(from: 1, nil)),
        ("outcome from a non-participant", .outcome(from: 3, outcome(.committed))),
        ("abort", .abort(from: 1, AbortPayload(code: .storageFailure, blamed: nil))),
        ("linkFailed", .linkFailed),
        ("promoted", .promoted),
        ("promoteFailed", .promoteFailed),
        ("discarded", .discarded),
    ]

    /// What each state does with each event (both policies agree except where noted).
    static func expected(_ policy: AppCommit.Policy, _ stage: Stage, _ name: String) -> AppCommit.Action {
        let doubt = AppCommit.Action.end(.inDoubt)
        switch (stage, name) {
        case (.staging, "staged"): return .sendCommit
        case (.staging, "stageFailed"): return .end(.failed(.storage(reason: "disk full"), sendAbort: true))
        case (.sendingCommit, "commitSent"): return .awaitAnswer
        case (.awaiting, "outcome committed"): return policy == .duo ? .promote : .awaitAnswer
        case (.awaiting, "outcome aborted"), (.awaiting, "abort"): return policy == .duo ? .discard : .awaitAnswer
        case (.awaitingAfterOneCommitted, "outcome committed"), (.awaitingAfterOneCommitted, "outcome aborted"),
             (.awaitingAfterOneCommitted, "abort"):
            // Trio: node 1 answered already (a second answer from it is not definitive). Duo: as `awaiting`.
            return policy == .duo ? expected(policy, .awaiting, name) : doubt
        case (.promoting, "promoted"): return .end(.committed)
        case (.discarding, "discarded"):
            return .end(.failed(.abortProtocol(party: policy == .duo ? .node(1) : nil), sendAbort: false))
        default: return doubt
        }
    }

    @Test(arguments: [AppCommit.Policy.duo, .trio])
    func everyStateAndEvent(_ policy: AppCommit.Policy) {
        for stage in Stage.allCases {
            for (name, event) in Self.events {
                var machine = Self.machine(policy, at: stage)
                let action = machine.handle(event)
                #expect(action == Self.expected(policy, stage, name), "\(policy) \(stage) + \(name)")
                // Only a definitive answer from every node discards; only committed from every node promotes.
                if action == .discard { #expect(stage == .awaiting || stage == .awaitingAfterOneCommitted) }
            }
        }
    }

    @Test func startStagesFirstAndOnlyOnce() {
        var machine = AppCommit(policy: .duo, nodes: [1], keyID: Self.keyID, gen: Self.gen, digest: Self.digest)
        #expect(machine.start() == .stage)
        #expect(machine.start() == .end(.inDoubt))
        #expect(machine.isOver)
    }

    @Test func trioPromotesOnlyWhenBothNodesCommitted() {
        var machine = Self.machine(.trio, at: .awaiting)
        #expect(machine.handle(.outcome(from: 2, Self.outcome(.committed))) == .awaitAnswer)
        #expect(machine.handle(.outcome(from: 1, Self.outcome(.committed))) == .promote)
        #expect(machine.handle(.promoteFailed) == .end(.inDoubt))
    }

    @Test func trioMixedAnswersAreInDoubt() {
        var machine = Self.machine(.trio, at: .awaiting)
        #expect(machine.handle(.outcome(from: 1, Self.outcome(.committed))) == .awaitAnswer)
        #expect(machine.handle(.abort(from: 2, AbortPayload(code: .storageFailure, blamed: nil))) == .end(.inDoubt))
    }

    @Test func trioAllAbortedDiscardsAndNamesTheBlamedParty() {
        var machine = Self.machine(.trio, at: .awaiting)
        #expect(machine.handle(.outcome(from: 1, Self.outcome(.aborted))) == .awaitAnswer)
        #expect(machine.handle(.abort(from: 2, AbortPayload(code: .abort, blamed: 0))) == .discard)
        #expect(machine.handle(.discarded) == .end(.failed(.abortProtocol(party: .app), sendAbort: false)))
    }

    @Test func duoReportsTheNodesOwnAbortReason() {
        var machine = Self.machine(.duo, at: .awaiting)
        let abort = AbortPayload(code: .staleGeneration, blamed: nil)
        #expect(machine.handle(.abort(from: 1, abort)) == .discard)
        #expect(machine.handle(.discarded) == .end(.failed(SilentShardError(abort.sessionError(sender: 1)), sendAbort: false)))
    }

    @Test func aLinkFailureAfterCommitIsInDoubtNeverADiscard() {
        for policy in [AppCommit.Policy.duo, .trio] {
            var machine = Self.machine(policy, at: .awaiting)
            #expect(machine.handle(.linkFailed) == .end(.inDoubt))
            var sending = Self.machine(policy, at: .sendingCommit)
            #expect(sending.handle(.linkFailed) == .end(.inDoubt))
        }
    }
}
