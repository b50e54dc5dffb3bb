import CloudNode
import MPCProtocols
import SilentShardCore
import Testing

/// `NodeCommit` (`docs/protocol/session.md` §7.2 at a node) without I/O: every state × every event, for the
/// duo (direct) and trio (prepared) policies. The end-to-end oracles stay `CutEverywhereTests`
/// (both modes) and `NodeKillTests`.
@Suite("Node commit state machine")
struct NodeCommitTests {
    static let keyID = KeyID(checked: [UInt8](repeating: 0x0A, count: 32))
    static let gen = Generation(checked: [UInt8](repeating: 0x0B, count: 32))
    static let digest = [UInt8](repeating: 0x0C, count: 32)
    static let other = [UInt8](repeating: 0xEE, count: 32)
    static let appAbort = SilentShardError.abortProtocol(party: .app)
    static let lost = SilentShardError.network(.connectionLost)

    static let direct = NodeCommit.Policy.direct
    static let prepared = NodeCommit.Policy.prepared(other: 2)

    static func commitFrame(digest: [UInt8] = digest, context: CommitPayload.Context = .inSession) -> CommitPayload {
        CommitPayload(keyID: keyID, gen: gen, digest: digest, context: context)
    }

    static func readyFrame(digest: [UInt8] = digest) -> ReadyPayload { ReadyPayload(keyID: keyID, gen: gen, digest: digest) }

    enum Stage: CaseIterable {
        case preparing, sendingReady, awaitingBoth, awaitingReady, awaitingCommit, committing, dropping, releasing, answering
    }

    /// The path to `stage`, or nil where the policy never gets there.
    static func path(_ policy: NodeCommit.Policy, to stage: Stage) -> [NodeCommit.Event]? {
        let isDirect = policy == direct
        switch stage {
        case .preparing: return isDirect ? nil : []
        case .sendingReady: return isDirect ? nil : [.prepared]
        case .awaitingBoth: return isDirect ? nil : [.prepared, .readySent]
        case .awaitingReady: return isDirect ? nil : [.prepared, .readySent, .commit(commitFrame())]
        case .awaitingCommit: return isDirect ? [] : [.prepared, .readySent, .ready(readyFrame())]
        case .committing: return isDirect ? [.commit(commitFrame())] : [.prepared, .readySent, .commit(commitFrame()), .ready(readyFrame())]
        case .dropping: return isDirect ? nil : [.prepared, .readySent, .abort(from: 0, error: appAbort)]
        case .releasing: return isDirect ? [.commit(commitFrame()), .storeCommitted] : nil
        case .answering: return isDirect ? [.commit(commitFrame()), .storeCommitted, .done] : [.prepared, .readySent, .commit(commitFrame()), .ready(readyFrame()), .storeCommitted]
        }
    }

    static let events: [(String, NodeCommit.Event)] = [
        ("prepared", .prepared),
        ("readySent", .readySent),
        ("commit", .commit(commitFrame())),
        ("commit, other digest", .commit(commitFrame(digest: other))),
        ("commit, reconcile context", .commit(commitFrame(context: .reconcile))),
        ("commit undecodable", .commit(nil)),
        ("ready", .ready(readyFrame())),
        ("ready, other digest", .ready(readyFrame(digest: other))),
        ("ready undecodable", .ready(nil)),
        ("abort from the app", .abort(from: 0, error: appAbort)),
        ("abort from the other node", .abort(from: 2, error: .abortProtocol(party: .node(2)))),
        ("abort from the other node after its READY", .abort(from: 2, error: .abortProtocol(party: .node(2)), readyArrived: true)),
        ("linkFailed", .linkFailed(lost)),
        ("storeCommitted", .storeCommitted),
        ("storeFailed", .storeFailed(currentChanged: false)),
        ("storeFailed, current changed", .storeFailed(currentChanged: true)),
        ("dropped", .dropped),
        ("done", .done),
    ]

    static func expected(_ policy: NodeCommit.Policy, _ stage: Stage, _ name: String) -> NodeCommit.Action {
        let isDirect = policy == direct
        // Unexpected: a duo node has stored nothing before its transaction; a trio node may hold PREPARED.
        let unexpected: NodeCommit.Action = isDirect && stage != .committing && stage != .releasing
            ? .end(.failed(.protocolViolation(party: .app))) : .end(.inDoubt)
        switch (stage, name) {
        case (.preparing, "prepared"): return .sendReady
        case (.preparing, "storeFailed"), (.preparing, "storeFailed, current changed"): return .sendAbort(.storageFailure)
        case (.sendingReady, "readySent"): return .awaitFrames
        case (.sendingReady, "linkFailed"): return .end(.inDoubt)
        case (.awaitingBoth, "commit"), (.awaitingBoth, "ready"): return .awaitFrames
        case (.awaitingBoth, "commit, other digest"), (.awaitingBoth, "commit, reconcile context"), (.awaitingBoth, "commit undecodable"),
             (.awaitingBoth, "ready, other digest"), (.awaitingBoth, "ready undecodable"), (.awaitingBoth, "linkFailed"):
            return .end(.inDoubt)
        case (.awaitingBoth, "abort from the app"), (.awaitingBoth, "abort from the other node"): return .drop
        case (.awaitingReady, "ready"): return .commitStore
        case (.awaitingReady, "ready, other digest"), (.awaitingReady, "ready undecodable"), (.awaitingReady, "linkFailed"),
             (.awaitingReady, "abort from the app"):
            return .end(.inDoubt)  // the app sent COMMIT: its later ABORT promises nothing
        case (.awaitingReady, "abort from the other node"): return .drop
        case (.awaitingCommit, "commit"): return isDirect ? .commitStore : .commitStore
        case (.awaitingCommit, "commit, other digest"), (.awaitingCommit, "commit, reconcile context"),
             (.awaitingCommit, "commit undecodable"):
            return isDirect ? .sendAbort(.resultMismatch) : .end(.inDoubt)
        case (.awaitingCommit, "abort from the app"): return isDirect ? .end(.failed(appAbort)) : .drop
        case (.awaitingBoth, "abort from the other node after its READY"), (.awaitingReady, "abort from the other node after its READY"):
            return .end(.inDoubt)  // its READY came first: its ABORT promises nothing
        case (.awaitingCommit, "abort from the other node"), (.awaitingCommit, "abort from the other node after its READY"):
            // Duo: no other node exists; an ABORT is the app's. Trio: B sent READY, so its ABORT promises nothing.
            return isDirect ? .end(.failed(.abortProtocol(party: .node(2)))) : .end(.inDoubt)
        case (.awaitingCommit, "linkFailed"): return isDirect ? .end(.failed(lost)) : .end(.inDoubt)
        case (.committing, "storeCommitted"): return isDirect ? .releaseLease : .sendOutcome(.committed)
        case (.committing, "storeFailed"): return isDirect ? .sendAbort(.storageFailure) : .end(.inDoubt)
        case (.committing, "storeFailed, current changed"): return isDirect ? .sendAbort(.staleGeneration) : .end(.inDoubt)
        case (.dropping, "dropped"): return .sendOutcome(.aborted)
        case (.releasing, "done"): return .sendOutcome(.committed)
        case (.answering, "done"): return .end(.committed)
        default: return unexpected
        }
    }

    @Test(arguments: [NodeCommitTests.direct, NodeCommitTests.prepared])
    func everyStateAndEvent(_ policy: NodeCommit.Policy) {
        for stage in Stage.allCases {
            guard let path = Self.path(policy, to: stage) else { continue }
            for (name, event) in Self.events {
                var machine = NodeCommit(policy: policy, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: nil)
                _ = machine.start()
                for step in path { _ = machine.handle(step) }
                #expect(machine.handle(event) == Self.expected(policy, stage, name), "\(policy) \(stage) + \(name)")
            }
        }
    }

    @Test func startAwaitsTheCommitInDuoAndPreparesInTrio() {
        var duo = NodeCommit(policy: Self.direct, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: nil)
        #expect(duo.start() == .awaitFrames)
        var trio = NodeCommit(policy: Self.prepared, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: nil)
        #expect(trio.start() == .prepare)
        #expect(trio.start() == .end(.inDoubt))
    }

    @Test func aDuoCommitForAnotherKeyThanTheSetupsIsAMismatch() {
        var machine = NodeCommit(policy: Self.direct, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: KeyID(checked: Self.other))
        _ = machine.start()
        #expect(machine.handle(.commit(Self.commitFrame())) == .sendAbort(.resultMismatch))
        #expect(machine.handle(.done) == .end(.failed(.abortProtocol(party: nil))))
    }

    @Test func trioEndingsAfterTheirAnswers() {
        var dropped = NodeCommit(policy: Self.prepared, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: nil)
        _ = dropped.start()
        for event: NodeCommit.Event in [.prepared, .readySent, .abort(from: 2, error: Self.lost), .dropped] { _ = dropped.handle(event) }
        #expect(dropped.handle(.done) == .end(.aborted))
        var failedDrop = NodeCommit(policy: Self.prepared, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: nil)
        _ = failedDrop.start()
        for event: NodeCommit.Event in [.prepared, .readySent, .abort(from: 0, error: Self.appAbort)] { _ = failedDrop.handle(event) }
        #expect(failedDrop.handle(.storeFailed(currentChanged: false)) == .end(.inDoubt))
        var failedPrepare = NodeCommit(policy: Self.prepared, keyID: Self.keyID, gen: Self.gen, digest: Self.digest, setupKeyID: nil)
        _ = failedPrepare.start()
        _ = failedPrepare.handle(.storeFailed(currentChanged: false))
        #expect(failedPrepare.handle(.done) == .end(.failed(.serviceUnavailable(retryAfter: nil))))
    }
}
