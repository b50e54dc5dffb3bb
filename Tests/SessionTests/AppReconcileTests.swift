import MPCProtocols
import SilentShardCore
import Testing

/// `AppReconcile` (`docs/protocol/session.md` §7.3 at the app) without I/O: every decision from the record and
/// the nodes' statuses, and every answer to it. The end-to-end oracles stay the cut, kill and reconcile
/// suites.
@Suite("App reconcile state machine")
struct AppReconcileTests {
    static let keyID = KeyID(checked: [UInt8](repeating: 0x0A, count: 32))
    static let g0 = Generation(checked: [UInt8](repeating: 0x01, count: 32)), g1 = Generation(checked: [UInt8](repeating: 0x02, count: 32))
    static let g2 = Generation(checked: [UInt8](repeating: 0x03, count: 32))
    static let d = [UInt8](repeating: 0x0D, count: 32), otherD = [UInt8](repeating: 0x0E, count: 32)
    static let conflict = SilentShardError.reconcileConflict(keyId: "k")

    static func status(current: Generation?, prepared: (Generation, [UInt8])? = nil) -> KeyStatus {
        KeyStatus(currentGen: current, prepared: prepared, preparedHoldsCommit: false, decision: .unknown)
    }

    static func outcome(_ outcome: OutcomePayload.Outcome, gen: Generation = g1, current: Generation?,
                        keyID: KeyID = keyID) -> OutcomePayload {
        OutcomePayload(keyID: keyID, gen: gen, digest: d, outcome: outcome, currentGen: current)
    }

    static func machine(_ policy: AppReconcile.Policy, current: Generation? = g0, staged: Generation? = nil) -> AppReconcile {
        AppReconcile(policy: policy, storageKeyId: "k", keyID: keyID, current: current, staged: staged.map { ($0, d) })
    }

    /// Drives `machine` from `statuses` with `events` and returns every action, the first included.
    static func run(_ machine: AppReconcile, _ statuses: [PartyIndex: KeyStatus?], _ events: [AppReconcile.Event]) -> [AppReconcile.Action] {
        var m = machine
        var actions = [m.start(statuses: statuses)]
        for event in events { actions.append(m.handle(event)) }
        return actions
    }

    static func rollback(_ gen: Generation) -> AppReconcile.Action {
        .sendRollback(AbortPayload(code: .rollback, blamed: nil, rollback: (keyID, gen)))
    }

    // MARK: Duo

    @Test func duoWithoutAStagedShareConfirmsTheCurrentOne() {
        #expect(Self.run(Self.machine(.duo), [1: Self.status(current: Self.g0)], [.sent]) == [.sendDone, .end(.current)])
        #expect(Self.run(Self.machine(.duo), [1: Self.status(current: Self.g1)], []) == [.end(.failed(.staleKeyshare))])
        #expect(Self.run(Self.machine(.duo, current: nil), [1: Self.status(current: nil)], []) == [.end(.failed(.staleKeyshare))])
    }

    @Test func duoRefusesAStatusItCannotHave() {
        #expect(Self.run(Self.machine(.duo), [1: Self.status(current: Self.g0, prepared: (Self.g1, Self.d))], [])
                == [.end(.failed(.protocolViolation(party: .node(1))))])
        #expect(Self.run(Self.machine(.duo), [1: nil], []) == [.end(.failed(.protocolViolation(party: .node(1))))])
    }

    @Test func duoPromotesAStagedShareTheNodeCommitted() {
        #expect(Self.run(Self.machine(.duo, staged: Self.g1), [1: Self.status(current: Self.g1)], [.sent, .promoted])
                == [.sendDone, .promote, .end(.staged)])
    }

    @Test func duoRollsBackAStagedShareTheNodeLacks() {
        let m = Self.machine(.duo, staged: Self.g1), s: [PartyIndex: KeyStatus?] = [1: Self.status(current: Self.g0)]
        #expect(Self.run(m, s, [.sent, .outcomes([1: Self.outcome(.aborted, current: Self.g0)]), .discarded])
                == [Self.rollback(Self.g1), .awaitOutcomes, .discard, .end(.current)])
        // The first generation of a key rolled back: there is no key.
        #expect(Self.run(Self.machine(.duo, current: nil, staged: Self.g1), [1: Self.status(current: nil)],
                         [.sent, .outcomes([1: Self.outcome(.aborted, current: nil)]), .discarded])
                == [Self.rollback(Self.g1), .awaitOutcomes, .discard, .end(.failed(.abortedKeyshare(keyId: "k")))])
        // The node had committed g after all: roll forward.
        #expect(Self.run(m, s, [.sent, .outcomes([1: Self.outcome(.committed, current: Self.g1)]), .promoted])
                == [Self.rollback(Self.g1), .awaitOutcomes, .promote, .end(.staged)])
        // An answer for another key or generation is a protocol violation; an undecided one a conflict.
        #expect(Self.run(m, s, [.sent, .outcomes([1: Self.outcome(.aborted, gen: Self.g2, current: Self.g0)])]).last
                == .end(.failed(.protocolViolation(party: .node(1)))))
        #expect(Self.run(m, s, [.sent, .outcomes([1: Self.outcome(.inDoubt, current: Self.g0)])]).last == .end(.failed(Self.conflict)))
        #expect(Self.run(m, s, [.sent, .outcomes([1: Self.outcome(.committed, current: Self.g0)])]).last == .end(.failed(Self.conflict)))
    }

    @Test func duoConflictWhenTheNodeHoldsNeither() {
        #expect(Self.run(Self.machine(.duo, staged: Self.g1), [1: Self.status(current: Self.g2)], [])
                == [.end(.failed(Self.conflict))])
        #expect(Self.run(Self.machine(.duo, staged: Self.g1), [1: Self.status(current: nil)], [])
                == [.end(.failed(Self.conflict))])
    }

    // MARK: Trio

    @Test func trioRollsBackAnOrphanPreparedGeneration() {
        let s: [PartyIndex: KeyStatus?] = [1: Self.status(current: Self.g0, prepared: (Self.g1, Self.d)), 2: Self.status(current: Self.g0)]
        let aborted: [PartyIndex: OutcomePayload] = [1: Self.outcome(.aborted, current: Self.g0), 2: Self.outcome(.aborted, current: Self.g0)]
        #expect(Self.run(Self.machine(.trio), s, [.sent, .outcomes(aborted)]) == [Self.rollback(Self.g1), .awaitOutcomes, .end(.current)])
        var mixed = aborted
        mixed[2] = Self.outcome(.committed, current: Self.g1)
        #expect(Self.run(Self.machine(.trio), s, [.sent, .outcomes(mixed)]).last == .end(.failed(Self.conflict)))
        let two: [PartyIndex: KeyStatus?] = [1: Self.status(current: Self.g0, prepared: (Self.g1, Self.d)),
                                             2: Self.status(current: Self.g0, prepared: (Self.g2, Self.d))]
        #expect(Self.run(Self.machine(.trio), two, []) == [.end(.failed(Self.conflict))])
    }

    @Test func trioRollsForwardAGenerationEveryNodeHolds() {
        let s: [PartyIndex: KeyStatus?] = [1: Self.status(current: Self.g1), 2: Self.status(current: Self.g0, prepared: (Self.g1, Self.d))]
        let commit = AppReconcile.Action.sendCommit(CommitPayload(keyID: Self.keyID, gen: Self.g1, digest: Self.d, context: .reconcile))
        let committed: [PartyIndex: OutcomePayload] = [1: Self.outcome(.committed, current: Self.g1), 2: Self.outcome(.committed, current: Self.g1)]
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), s, [.sent, .outcomes(committed), .promoted])
                == [commit, .awaitOutcomes, .promote, .end(.staged)])
        var short = committed
        short[2] = Self.outcome(.committed, current: Self.g0)
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), s, [.sent, .outcomes(short)]).last == .end(.failed(Self.conflict)))
        // PREPARED under another digest is not the app's result: roll back is not possible (A has g) → conflict.
        let otherDigest: [PartyIndex: KeyStatus?] = [1: Self.status(current: Self.g1),
                                                    2: Self.status(current: Self.g0, prepared: (Self.g1, Self.otherD))]
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), otherDigest, []) == [.end(.failed(Self.conflict))])
    }

    @Test func trioRollsBackWhenNoNodeCommitted() {
        let s: [PartyIndex: KeyStatus?] = [1: Self.status(current: Self.g0), 2: Self.status(current: nil)]
        let aborted: [PartyIndex: OutcomePayload] = [1: Self.outcome(.aborted, current: Self.g0), 2: Self.outcome(.aborted, current: nil)]
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), s, [.sent, .outcomes(aborted), .discarded])
                == [Self.rollback(Self.g1), .awaitOutcomes, .discard, .end(.current)])
        var late = aborted
        late[1] = Self.outcome(.committed, current: Self.g1)
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), s, [.sent, .outcomes(late)]).last == .end(.failed(Self.conflict)))
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), [1: Self.status(current: Self.g2), 2: Self.status(current: Self.g0)], [])
                == [.end(.failed(Self.conflict))])
    }

    @Test func trioPromotesWhenBothNodesCommittedAndNeedsEveryStatus() {
        #expect(Self.run(Self.machine(.trio, staged: Self.g1), [1: Self.status(current: Self.g1), 2: Self.status(current: Self.g1)],
                         [.sent, .promoted]) == [.sendDone, .promote, .end(.staged)])
        #expect(Self.run(Self.machine(.trio), [1: Self.status(current: Self.g0), 2: nil], [])
                == [.end(.failed(.protocolViolation(party: .node(2))))])
    }

    // MARK: Both

    /// A failed send, read or storage call ends reconcile with that error, in every state; an event a
    /// state does not expect is a conflict (the record stays as it is).
    @Test(arguments: [AppReconcile.Policy.duo, .trio])
    func failuresAndUnexpectedEvents(_ policy: AppReconcile.Policy) {
        let nodes: [PartyIndex] = policy == .duo ? [1] : [1, 2]
        let rollback = Dictionary(uniqueKeysWithValues: nodes.map { ($0, Optional(Self.status(current: Self.g0))) })
        let paths: [[AppReconcile.Event]] = [[], [.sent]]
        let lost = SilentShardError.network(.connectionLost)
        for path in paths {
            #expect(Self.run(Self.machine(policy, staged: Self.g1), rollback, path + [.failed(lost)]).last == .end(.failed(lost)))
            for unexpected: AppReconcile.Event in [.promoted, .discarded] + (path.isEmpty ? [] : [.sent]) {
                #expect(Self.run(Self.machine(policy, staged: Self.g1), rollback, path + [unexpected]).last
                        == .end(.failed(Self.conflict)))
            }
        }
        var started = Self.machine(policy)
        _ = started.start(statuses: rollback)
        #expect(started.start(statuses: rollback) == .end(.failed(Self.conflict)))
    }
}
