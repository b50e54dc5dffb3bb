import CloudNode
import MPCProtocols
import SilentShardCore
import Testing

/// `NodeReconcile` (`docs/protocol/session.md` §7.3 at a node) without I/O: every state × event, duo and trio.
@Suite("Node reconcile state machine")
struct NodeReconcileTests {
    static let keyID = KeyID(checked: [UInt8](repeating: 0x0A, count: 32)), other = [UInt8](repeating: 0xEE, count: 32)
    static let g1 = Generation(checked: [UInt8](repeating: 0x01, count: 32)), d = [UInt8](repeating: 0x0D, count: 32)
    static let zeros = [UInt8](repeating: 0, count: 32)
    static let lost = SilentShardError.network(.connectionLost)
    static let violation = NodeReconcile.Action.end(.failed(.protocolViolation(party: .app)))

    static func rollback(keyID: KeyID = keyID, code: WireCode = .rollback) -> NodeReconcile.Event {
        .abort(AbortPayload(code: code, blamed: nil, rollback: code == .rollback ? (keyID, g1) : nil), error: lost)
    }

    static func commit(keyID: KeyID = keyID, context: CommitPayload.Context = .reconcile) -> NodeReconcile.Event {
        .commit(CommitPayload(keyID: keyID, gen: g1, digest: d, context: context))
    }

    static func run(_ policy: NodeReconcile.Policy, _ events: [NodeReconcile.Event]) -> [NodeReconcile.Action] {
        var machine = NodeReconcile(policy: policy, keyID: keyID)
        var actions = [machine.start()]
        for event in events { actions.append(machine.handle(event)) }
        return actions
    }

    @Test(arguments: [NodeReconcile.Policy.duo, .trio])
    func doneAndRollback(_ policy: NodeReconcile.Policy) {
        #expect(Self.run(policy, [.done]) == [.awaitDecision, .end(.reconciled(nil))])
        let tombstoned = OutcomePayload(keyID: Self.keyID, gen: Self.g1, digest: Self.zeros, outcome: .aborted, currentGen: nil)
        #expect(Self.run(policy, [Self.rollback(), .stored(.aborted, currentGen: nil), .sent])
                == [.awaitDecision, .rollbackStore(gen: Self.g1), .sendOutcome(tombstoned), .end(.reconciled(.aborted))])
        // g had been committed before the rollback came: the answer says so.
        let late = OutcomePayload(keyID: Self.keyID, gen: Self.g1, digest: Self.zeros, outcome: .committed, currentGen: Self.g1)
        #expect(Self.run(policy, [Self.rollback(), .stored(.committed, currentGen: Self.g1), .sent]).suffix(2)
                == [.sendOutcome(late), .end(.reconciled(.committed))])
        #expect(Self.run(policy, [Self.rollback(), .storeFailed]).last == .end(.failed(.serviceUnavailable(retryAfter: nil))))
        // Any other ABORT, one for another key, or a failed read ends the step with its error.
        #expect(Self.run(policy, [Self.rollback(keyID: KeyID(checked: Self.other))]).last == .end(.failed(Self.lost)))
        #expect(Self.run(policy, [Self.rollback(code: .abort)]).last == .end(.failed(Self.lost)))
        #expect(Self.run(policy, [.failed(Self.lost)]).last == .end(.failed(Self.lost)))
    }

    @Test func trioRollsAPreparedGenerationForwardOnCommit() {
        let committed = OutcomePayload(keyID: Self.keyID, gen: Self.g1, digest: Self.d, outcome: .committed, currentGen: Self.g1)
        #expect(Self.run(.trio, [Self.commit(), .stored(.committed, currentGen: Self.g1), .sent])
                == [.awaitDecision, .commitStore(gen: Self.g1, digest: Self.d), .sendOutcome(committed), .end(.reconciled(.committed))])
        // The store could not tell (PREPARED under another digest, CURRENT elsewhere): in doubt, no decision.
        #expect(Self.run(.trio, [Self.commit(), .stored(.inDoubt, currentGen: nil), .sent]).last == .end(.reconciled(nil)))
        #expect(Self.run(.trio, [Self.commit(keyID: KeyID(checked: Self.other))]).last == Self.violation)
        #expect(Self.run(.trio, [Self.commit(context: .inSession)]).last == Self.violation)
        #expect(Self.run(.trio, [.commit(nil)]).last == Self.violation)
    }

    @Test func duoNeverCommitsInReconcile() {
        #expect(Self.run(.duo, [Self.commit()]).last == Self.violation)
    }

    /// Events a state does not expect end the step as the app's protocol violation; nothing is stored.
    @Test(arguments: [NodeReconcile.Policy.duo, .trio])
    func unexpectedEvents(_ policy: NodeReconcile.Policy) {
        for event: NodeReconcile.Event in [.stored(.aborted, currentGen: nil), .storeFailed, .sent] {
            #expect(Self.run(policy, [event]).last == Self.violation)
        }
        for event: NodeReconcile.Event in [.done, Self.rollback(), .sent] {
            #expect(Self.run(policy, [Self.rollback(), event]).last == Self.violation)
        }
        var machine = NodeReconcile(policy: policy, keyID: Self.keyID)
        _ = machine.start()
        #expect(machine.start() == Self.violation)
    }
}
