@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Issue 10, trio faults beside the cuts: the app's promote write failing, node B slower than the
/// nodes' frame deadline at chosen messages. Every case ends with `settleAndCheck` (one generation at
/// all three parties after reconcile, nothing staged or PREPARED, the settled share signs with both
/// signer sets) and a successful retry.
@Suite("Trio faults: promote write failing, slow B", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioFaultTests {
    /// The app's storage fails the write that promotes the staged share after both nodes committed
    /// (twice: the operation's own immediate reconcile fails the same way; with one failure that
    /// reconcile already repairs it — `promoteWriteFailsOnce`): the operation fails with
    /// `reconcileRequired`, the share stays staged; an explicit reconcile finds both nodes CURRENT at it
    /// and promotes (nothing lost); the next refresh works.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa], [TrioOperation.keygen, .refresh, .importKey])
    func promoteWriteFails(algorithm: Keyshare.Algorithm, operation: TrioOperation) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let runner = try await TrioOperationRunner(fixture: fixture, algorithm: algorithm, operation: operation)
        fixture.storage.failPromotes.withLock { $0 = 2 }
        let error = await failure { () throws(SilentShardError) in try await runner.run() }
        guard case .reconcileRequired? = error else {
            Issue.record("expected reconcileRequired, got \(String(describing: error))")
            return
        }
        _ = await fixture.peer.reports()
        // Both nodes committed; the app still has the share staged.
        let keyId = try #require(fixture.storage.writes.last?.keyId)
        let staged = try #require(try await fixture.storage.read(keyId: keyId)?.staged)
        let stagedShare = try Keyshare(serialized: Data([UInt8](staged.bytes).dropFirst(36)))  // "SST1" ‖ D ‖ keyshare
        let gen = [UInt8](stagedShare.generation)
        #expect(try fixture.storeA.share(keyId: keyId)?.gen == gen && fixture.storeB.share(keyId: keyId)?.gen == gen)
        let settled = try await runner.settleAndCheck("\(algorithm) \(operation) promote failed")
        #expect(settled[keyId]?.generation == stagedShare.generation, "reconcile promoted the committed share")
        let refreshed = try await fixture.session.keyRefresh(keyshare: try #require(settled[keyId]))
        let message = testMessage(algorithm, "after the failed promote")
        #expect(try verify(try await fixture.session.signature(keyshare: refreshed, message: message, signer: .nodeB),
                           message: message, keyshare: refreshed))
    }

    /// One failed promote write: the operation's immediate reconcile promotes; the caller sees success.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func promoteWriteFailsOnce(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let runner = try await TrioOperationRunner(fixture: fixture, algorithm: algorithm, operation: .refresh)
        fixture.storage.failPromotes.withLock { $0 = 1 }
        let refreshed = try #require(try await runner.run())
        #expect(fixture.storage.failPromotes.withLock { $0 } == 0, "the promote write failed once")
        let record = try #require(try await fixture.storage.read(keyId: refreshed.keyId))
        #expect(record.staged == nil && record.current != nil)
        _ = try await runner.settleAndCheck("\(algorithm) refresh, one promote failure")
    }

    /// B answers one message later than the nodes' frame deadline (A gives up: PEER_UNAVAILABLE, T7),
    /// at a protocol message and at its commit messages: a typed error at the app, no partial
    /// promotion after reconcile, and the retry (B on time again) succeeds.
    /// B's link dies when A sends its ACCEPT (A's 3rd message on the link: LINK_OPEN, SETUP, ACCEPT):
    /// A must still answer REJECT(PEER_UNAVAILABLE) (session.md §6.1 rule 4) — it used to close the app's connection
    /// without a frame on this path — and nothing is staged.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func nodeBDiesAtAsAccept(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        fixture.peer.dieAfter.withLock { $0 = 2 }
        let error = await failure { () throws(SilentShardError) in _ = try await fixture.session.keyRefresh(keyshare: keyshare) }
        #expect(error == .peerUnavailable(party: .node(1)), "\(String(describing: error))")
        #expect(try await fixture.storage.read(keyId: keyshare.keyId)?.staged == nil)
        fixture.peer.dieAfter.withLock { $0 = nil }
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        let message = testMessage(algorithm, "after B died at A's ACCEPT")
        #expect(try verify(try await fixture.session.signature(keyshare: refreshed, message: message, signer: .nodeB),
                           message: message, keyshare: refreshed))
    }

    static let slowCases: [(Keyshare.Algorithm, TrioOperation)] = longTests
        ? [(.ecdsa, .refresh), (.ecdsa, .signB), (.eddsa, .refresh), (.eddsa, .signB)]
        : [(.ecdsa, .refresh), (.eddsa, .signB)]

    /// Default run: a protocol message and B's last; `SILENTSHARD_LONG_TESTS=1`: four messages, both
    /// algorithms, both operations.
    @Test(arguments: slowCases)
    func slowNodeB(algorithm: Keyshare.Algorithm, operation: TrioOperation) async throws {
        // B's messages on the link in an honest run.
        let count = try await TrioOperationRunner.honestMessageCounts(algorithm: algorithm, operation: operation)[.bToA, default: 0]
        try #require(count >= 3)
        for index in Set(longTests ? [1, count / 2, count - 2, count - 1] : [count / 2, count - 1]).sorted() {
            let context = "\(algorithm) \(operation) B slow at its message \(index) of \(count)"
            // A's deadlines are the test's: B's message goes out only once A's deadline passed (every
            // deadline of A, pending or new, has passed from then on), whatever the machine's speed.
            let deadlinesA = DeadlineSwitch()
            let fixture = try TrioFixture(algorithm: algorithm, deadlinesA: deadlinesA)
            let runner = try await TrioOperationRunner(fixture: fixture, algorithm: algorithm, operation: operation)
            fixture.peer.cutter.reset(late: (.bToA, index, {
                deadlinesA.expire()
                await deadlinesA.awaitTimeout()
            }))
            let error = await failure { () throws(SilentShardError) in try await runner.run() }
            // A protocol message of B's that A waits for: A gives up, the operation fails. B's late commit
            // messages (its OUTCOME, relayed in A's drain) are waited for by the app alone, whose deadline
            // is longer: then the operation may succeed, late.
            if index <= count / 2 { #expect(error != nil, "\(context): succeeded") }
            _ = await fixture.peer.reports()
            fixture.peer.cutter.reset()
            deadlinesA.reset()
            let settled = try await runner.settleAndCheck(context)
            do {
                let produced = try await runner.run(from: settled[runner.existing?.keyId ?? ""])
                if let produced {
                    let message = testMessage(algorithm, "after slow B")
                    #expect(try verify(try await fixture.session.signature(keyshare: produced, message: message, signer: .nodeB),
                                       message: message, keyshare: produced))
                }
            } catch {
                Issue.record("\(context): retry failed: \(error)")
            }
        }
    }
}
