import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import CloudNode
import trio

/// Issue 34 item 3 in trio: a FINAL_REQUEST for a presignature held by B, refused by node A with KEY_BUSY (A may
/// refuse for B, session.md §8.4), is resent — the same bytes — after the steps' backoff, through the same
/// `AppSession.retryingPost` as duo's (session.md §13.8 item 6).
@Suite("Trio: POSTs retried like steps (issue 34 item 3)", .timeLimit(.minutes(10)))
struct TrioPostRetryTests {
    @Test("issue 34 item 3: a FINAL_REQUEST to B refused by A with KEY_BUSY is resent, the same bytes, after the backoff",
          arguments: [TrioSigner.nodeA, .nodeB])
    func issue34_item3_trioFinalRequestRetriedAfterKeyBusy(signer: TrioSigner) async throws {
        let fixture = try TrioFixture(algorithm: .eddsa)
        let waits = LockedValue<[Duration]>([])
        let client = RefusingPostClient(inner: fixture.client, runner: fixture.runnerA, code: .keyBusy, refusals: 1)
        let session = TrioSession(algorithm: .eddsa, messageSigner: fixture.signer,
                                  cloudVerifyingKey: Hex.encode(fixture.clusterKey.verifyingKey.bytes),
                                  storageClient: fixture.storage, networkClient: client,
                                  actionProvider: TrioEdDSANetworkActions(), deviceClock: fixture.clock.read,
                                  deadlines: AppDeadlines(sleep: AppDeadlines.system.sleep,
                                                          backoff: { duration in waits.withLock { $0.append(duration) } }))
        let keyshare = try await session.keygen()
        let presignature = try await session.preSignature(keyshare: keyshare, signer: signer)
        let message = Data("retried in trio".utf8)
        let signature = try await session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(signature.rawRepresentation.count == 64)
        let bodies = client.bodies.withLock { $0 }
        #expect(bodies.count == 2, "one refusal by A, then the signer's answer")
        #expect(Set(bodies).count == 1, "session.md §8.5: the recorded request bytes, unchanged")
        #expect(waits.withLock { $0 } == [.milliseconds(25)])
    }
}
