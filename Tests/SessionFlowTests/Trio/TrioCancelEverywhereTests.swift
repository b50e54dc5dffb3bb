import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Issue 22 item 5 in trio: cancelling the operation's task before every message the app sends or reads
/// (refresh and sign, both algorithms). The operation ends with `cancelled` (its last message an ABORT),
/// `reconcileRequired` (after COMMIT), or success; after `reconcileKeyshare` the app and both nodes hold
/// one generation, nothing is staged, and the share signs.
@Suite("Trio: cancellation before every message", .heavy, .timeLimit(.minutes(30)))
struct TrioCancelEverywhereTests {
    enum Operation: String, CaseIterable, Sendable { case refresh, sign }

    static let points: [CutPoint] = (0..<4).map { .send($0) } + (0..<6).map { .read($0) }
    static let cases: [(Keyshare.Algorithm, Operation, CutPoint)] =
        [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { a in Operation.allCases.flatMap { o in points.map { (a, o, $0) } } }

    @Test(arguments: cases)
    func cancelThenSettle(algorithm: Keyshare.Algorithm, operation: Operation, point: CutPoint) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let session = fixture.session
        let keyshare = try await session.keygen()
        let message = testMessage(algorithm, "cancel")
        let sentBefore = fixture.client.sentMessages.count

        let (result, didFire) = await CancellableRun.run(arm: { cancel in
            fixture.client.armHook { candidate in if candidate == point { _ = cancel() } }
        }) {
            switch operation {
            case .refresh: _ = try await session.keyRefresh(keyshare: keyshare)
            case .sign: _ = try await session.signature(keyshare: keyshare, message: message, signer: .nodeA)
            }
        }
        fixture.client.armHook(nil)

        var failure: SilentShardError?
        if case .failure(let error) = result { failure = try #require(error as? SilentShardError, "\(error)") }
        if !didFire { #expect(failure == nil) }
        switch failure {
        case nil: break
        case .cancelled?:
            if let last = fixture.client.sentMessages.dropFirst(sentBefore).last {
                #expect(try Frame.parseBundle([UInt8](last)).last?.header.kind == .abort, "\(point): the last message is the ABORT")
            }
        case .reconcileRequired?:
            #expect(operation == .refresh)
        default:
            Issue.record("\(point): \(String(describing: failure))")
        }

        // Node A's step ended with the app's (the test client awaits it); B's ends when A's ABORT or the link's
        // close reaches it. Until then B still holds the key's lease and a reconcile would be KEY_BUSY (retry
        // later) — seen on a loaded machine. Wait for B's steps rather than for time.
        _ = await fixture.peer.reports()
        let settled = try await session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(try await fixture.storage.read(keyId: keyshare.keyId)?.staged == nil)
        #expect(try fixture.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](settled.generation), "\(point): A disagrees")
        #expect(try fixture.storeB.share(keyId: keyshare.keyId)?.gen == [UInt8](settled.generation), "\(point): B disagrees")
        let signature = try await session.signature(keyshare: settled, message: message)
        switch algorithm {
        case .ecdsa: #expect(try verifyECDSA(signature, hash: message, keyshare: settled))
        case .eddsa:
            let key = try Ed25519.VerifyingKey(bytes: [UInt8](settled.publicKey))
            #expect(key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message)))
        }
    }
}
