import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// session.md §9.6: the replay store lives in the node's database, so a restarted node (a fresh in-memory
/// `ReplayWindow`) or another process on the same database still refuses a SETUP seen before.
///
/// Security review finding 4: only the duo runner wrote session instance ids to the node's database; trio A
/// and B checked only their in-process `ReplayWindow`, so a captured SETUP replayed to another A process of
/// the cluster, or to a restarted A or B within the timestamp window, was served again. Every node now
/// records every SETUP's instance id in the durable replay store first.
@Suite("Finding 4: the durable replay store — a SETUP replayed to a restarted node is refused (session.md §9.6)", .heavy,
       .timeLimit(.minutes(30)))
struct DurableReplayTests {
    @Test(arguments: Keyshare.Mode.allCases, [Keyshare.Algorithm.ecdsa, .eddsa])
    func setupReplayedToARestartedNodeIsRejected(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        // Trio: what A sends B on the session's link.
        let linkMessages = LockedValue<[Data]>([])
        let fixture: SessionFixture
        switch mode {
        case .duo: fixture = try SessionFixture(mode: .duo, algorithm: algorithm)
        case .trio:
            fixture = SessionFixture(deployment: .trio(try TrioFixture(algorithm: algorithm, tamperToB: { index, bytes in
                linkMessages.withLock { if $0.count == index { $0.append(bytes) } }
                return bytes
            })))
        }
        _ = try await fixture.session.keygen()
        let setup = try #require(fixture.client.sentMessages.first)

        // The entry node restarted (or another process on the same database); trio: with a restarted B behind
        // it. Fresh in-memory windows everywhere, so only the durable store can tell.
        let peer = InProcessPeer()
        if let trio = fixture.trio {
            let behindA = try NodeStepRunner(identity: trio.identityB, store: trio.storeB, peer: nil, replayWindow: ReplayWindow(),
                                             clock: trio.clock.read, frameTimeout: .seconds(2))
            peer.runner.withLock { $0 = behindA }
        }
        let restarted = try fixture.restartedEntryRunner(peer: peer)
        let connection = try await ScriptedConnection(messages: [setup])
        let route = NodeStepRoute(algorithm: algorithm == .ecdsa ? .ecdsa : .eddsa, operation: .keygen, params: nil)
        #expect(await restarted.run(connection: connection, route: route) == .rejected(.replay))
        #expect(connection.sentFrames.first?.header.kind == .reject)

        guard let trio = fixture.trio else { return }
        #expect(await peer.reports().isEmpty, "A opened a link to B for a replayed SETUP")
        // What A sent B on the session's link: LINK_OPEN, then the app's SETUP.
        let opening = linkMessages.withLock { Array($0.prefix(2)) }
        #expect(opening.count == 2)
        // Node B restarted: A's LINK_OPEN and the SETUP replayed on a new link.
        let restartedB = NodeStepRunner(identity: trio.identityB, store: trio.storeB, peer: nil, replayWindow: try ReplayWindow(),
                                        clock: trio.clock.read, frameTimeout: .seconds(2))
        let toB = try await ScriptedConnection(messages: opening)
        #expect(await restartedB.serveLink(connection: toB) == .rejected(.replay))
    }

    /// Security review 2, finding 14 (trio: B behind A's link): a relayed preSignFinal has no SETUP, so its
    /// LINK_OPEN (instance_id = the presignature id, repeated on every retry) was kept in no replay store: a
    /// captured LINK_OPEN + FINAL_REQUEST could be opened at B again within the timestamp window. Each LINK_OPEN
    /// now carries a nonce and B keeps its hash in the durable replay store; A's genuine retries (fresh nonces)
    /// still get B's recorded answer.
    @Test func finding14_replayedPreSignFinalLinkOpenIsRefused() async throws {
        let linkMessages = LockedValue<[Data]>([])
        let fixture = try TrioFixture(algorithm: .ecdsa, tamperToB: { _, bytes in
            linkMessages.withLock { $0.append(bytes) }
            return bytes
        })
        let lossy = LossyPostClient(inner: fixture.client)
        let session = fixture.session(.ecdsa, storage: fixture.storage, client: lossy)
        let keyshare = try await session.keygen()
        let presignature = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        linkMessages.withLock { $0 = [] }
        // The request reaches B through A; the answer is lost on the way back to the app.
        let message = testMessage(.ecdsa, "relayed")
        lossy.loseAnswers.withLock { $0 = true }
        await #expect(throws: SilentShardError.self) {
            _ = try await session.preSignatureFinal(preSignature: presignature, message: message)
        }
        lossy.loseAnswers.withLock { $0 = false }
        // What A sent B on the preSignFinal link: LINK_OPEN (purpose 2), then the app's FINAL_REQUEST.
        let opening = linkMessages.withLock { Array($0.prefix(2)) }
        #expect(opening.count == 2)
        let open = try Frame.parseSingle([UInt8](try #require(opening.first)))
        #expect(open.header.kind == .linkOpen)
        #expect(try LinkOpenPayload(bytes: open.body).purpose == .preSignFinal)

        // Replayed on a new link to B (a restarted process: only the durable store can tell): refused, nothing sent.
        let restartedB = NodeStepRunner(identity: fixture.identityB, store: fixture.storeB, peer: nil,
                                        replayWindow: try ReplayWindow(), clock: fixture.clock.read, frameTimeout: .seconds(2))
        let toB = try await ScriptedConnection(messages: opening)
        #expect(await restartedB.serveLink(connection: toB) == .failed(.replayDetected))
        #expect(toB.sentFrames.isEmpty)

        // A's own retry (the app resends its recorded request; A opens a fresh LINK_OPEN with a new nonce) still
        // gets B's recorded answer.
        let signature = try await session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
        #expect(linkMessages.withLock { $0.count } == 4)
    }

    @Test func storeForgetsIdsAfterTheirRetention() throws {
        let directory = NSTemporaryDirectory() + "silentshard-replay-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/node.sqlite"
        let masterKey = NodeMasterKey.random()
        let store = try NodeShareStore(path: path, masterKey: masterKey)
        let other = try NodeShareStore(path: path, masterKey: masterKey)
        let id = InstanceID(checked: [UInt8](repeating: 0x5A, count: 32))
        try store.recordSessionInstance(id, nowMilliseconds: 1_000, retentionMilliseconds: 500)
        #expect(throws: NodeStoreError.replay) {
            try other.recordSessionInstance(id, nowMilliseconds: 1_499, retentionMilliseconds: 500)
        }
        try other.recordSessionInstance(id, nowMilliseconds: 1_500, retentionMilliseconds: 500)
        // An id of another size cannot reach the store: `InstanceID` has 32 bytes by construction.
        #expect(InstanceID([1, 2, 3]) == nil)
    }
}
