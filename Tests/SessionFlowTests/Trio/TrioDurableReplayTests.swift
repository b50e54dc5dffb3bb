import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// A node connection that hands the runner scripted messages (then nothing until closed) and records
/// what the runner sends.
private final class ScriptedTrioConnection: NodeStepConnection {
    private let pipe = InMemoryNetworkClient.pair()
    private let sent = LockedValue<[Data]>([])

    init(messages: [Data]) async throws {
        try await pipe.0.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        try await pipe.1.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        for message in messages { try await pipe.0.send(bytes: message) }
    }

    var sentFrames: [Frame] { sent.withLock { $0 }.compactMap { try? Frame.parseSingle([UInt8]($0)) } }

    func read() async throws -> Data { try await pipe.1.read() }
    func send(_ data: Data) async throws { sent.withLock { $0.append(data) } }
    func close(code: UInt16, reason: String) async { try? await pipe.1.disconnect() }
}

/// Security review finding 4: only the duo runner wrote session instance ids to the node's database
/// (session.md §9.6); trio A and B checked only their in-process `ReplayWindow`, so a captured SETUP
/// replayed to another A process of the cluster, or to a restarted A or B within the timestamp window,
/// was served again. Both now record every SETUP's instance id in the durable replay store first.
@Suite("Finding 4: trio nodes A and B refuse a SETUP replayed to a restarted process (session.md §9.6)", .heavy, .timeLimit(.minutes(30)))
struct TrioDurableReplayTests {
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func setupReplayedToARestartedNodeIsRejected(algorithm: Keyshare.Algorithm) async throws {
        let linkMessages = LockedValue<[Data]>([])
        let fixture = try TrioFixture(algorithm: algorithm, tamperToB: { index, bytes in
            linkMessages.withLock { if $0.count == index { $0.append(bytes) } }
            return bytes
        })
        let appMessages = LockedValue<[Data]>([])
        fixture.client.rewriteSend.withLock { rewrite in
            rewrite = { bytes in appMessages.withLock { $0.append(bytes) }; return bytes }
        }
        _ = try await fixture.session.keygen()
        let setup = try #require(appMessages.withLock { $0.first })
        // What A sent B on the session's link: LINK_OPEN, then the app's SETUP.
        let opening = linkMessages.withLock { Array($0.prefix(2)) }
        #expect(opening.count == 2)

        // Node A restarted (or another A process on the same database), with a restarted B behind it:
        // fresh in-memory windows everywhere, so only the durable store can tell.
        func restartedB() throws -> NodeStepRunner {
            NodeStepRunner(identity: fixture.identityB, store: fixture.storeB, peer: nil, replayWindow: try ReplayWindow(),
                           clock: fixture.clock.read, frameTimeout: .seconds(2))
        }
        let peer = InProcessPeer()
        let behindA = try restartedB()
        peer.runner.withLock { $0 = behindA }
        let restartedA = NodeStepRunner(identity: fixture.identityA, store: fixture.storeA, peer: peer,
                                        replayWindow: try ReplayWindow(), clock: fixture.clock.read,
                                        frameTimeout: .seconds(2))
        let toA = try await ScriptedTrioConnection(messages: [setup])
        let route = NodeStepRoute(algorithm: algorithm == .ecdsa ? .ecdsa : .eddsa, operation: .keygen, params: nil)
        #expect(await restartedA.run(connection: toA, route: route) == .rejected(.replay))
        #expect(toA.sentFrames.first?.header.kind == .reject)
        #expect(await peer.reports().isEmpty, "A opened a link to B for a replayed SETUP")

        // Node B restarted: A's LINK_OPEN and the SETUP replayed on a new link.
        let toB = try await ScriptedTrioConnection(messages: opening)
        #expect(try await restartedB().serveLink(connection: toB) == .rejected(.replay))
    }
}

/// Security review 2, finding 14: a relayed preSignFinal has no SETUP, so its LINK_OPEN (instance_id = the
/// presignature id, repeated on every retry) was kept in no replay store: a captured LINK_OPEN + FINAL_REQUEST could
/// be opened at B again within the timestamp window. Each LINK_OPEN now carries a nonce and B keeps its hash in the
/// durable replay store; A's genuine retries (fresh nonces) still get B's recorded answer.
@Suite("Finding 14: node B refuses a replayed preSignFinal LINK_OPEN", .heavy, .timeLimit(.minutes(30)))
struct TrioPreSignFinalLinkReplayTests {
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
        let toB = try await ScriptedTrioConnection(messages: opening)
        #expect(await restartedB.serveLink(connection: toB) == .failed(.replayDetected))
        #expect(toB.sentFrames.isEmpty)

        // A's own retry (the app resends its recorded request; A opens a fresh LINK_OPEN with a new nonce) still
        // gets B's recorded answer.
        let signature = try await session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
        #expect(linkMessages.withLock { $0.count } == 4)
    }
}
