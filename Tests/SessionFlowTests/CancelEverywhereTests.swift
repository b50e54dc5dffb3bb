import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing

/// Issue 22 item 5: cancelling the Swift task of a running operation before every message the app sends or
/// reads (duo: keygen, refresh, sign; trio: refresh, sign with A), and (duo) a step that reaches its deadline.
/// Afterwards:
/// * the operation ended with `cancelled` (before COMMIT: the node heard the app's ABORT), with
///   `reconcileRequired` (after COMMIT: in doubt, as session.md §7.2 says), or it had already finished;
/// * after `reconcileKeyshare`, the app's current generation is every node's, nothing is staged, and the
///   settled share signs.
@Suite("Cancellation before every message, and the step deadline", .heavy, .timeLimit(.minutes(30)))
struct CancelEverywhereTests {
    enum Operation: String, CaseIterable, Sendable { case keygen, refresh, sign }

    static func operations(_ mode: Keyshare.Mode) -> [Operation] { mode == .duo ? Operation.allCases : [.refresh, .sign] }
    static func points(_ mode: Keyshare.Mode) -> [CutPoint] {
        mode == .duo ? (0..<5).map { .send($0) } + (0..<4).map { .read($0) } : (0..<4).map { .send($0) } + (0..<6).map { .read($0) }
    }
    static let cases: [(Keyshare.Mode, Keyshare.Algorithm, Operation, CutPoint)] =
        Keyshare.Mode.allCases.flatMap { mode in
            [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { a in operations(mode).flatMap { o in points(mode).map { (mode, a, o, $0) } } }
        }

    @Test(arguments: cases)
    func cancelThenSettle(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, operation: Operation, point: CutPoint) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        let session = fixture.session
        let before: Keyshare? = operation == .keygen ? nil : try await session.keygen()
        let message = mode == .duo ? (algorithm == .ecdsa ? Data(repeating: 0x6A, count: 32) : Data("cancel".utf8))
                                   : testMessage(algorithm, "cancel")
        let writesBefore = fixture.storage.writes.count
        let sentBefore = fixture.client.sentMessages.count

        // The operation runs on its own task, which the hook cancels at `point` (once).
        let (result, didFire) = await CancellableRun.run(arm: { cancel in
            fixture.client.armHook { candidate in if candidate == point { _ = cancel() } }
        }) {
            try await Self.run(operation, session: session, before: before, message: message)
        }
        fixture.client.armHook(nil)

        var failure: SilentShardError?
        if case .failure(let error) = result { failure = try #require(error as? SilentShardError, "\(error)") }
        if !didFire { #expect(failure == nil, "not cancelled, yet \(String(describing: failure))") }
        switch failure {
        case nil: break
        case .cancelled?:
            // Before COMMIT: the app's last message was its ABORT (the node may have failed on the closed
            // connection first: in this harness a node busy with a round finds the pipe closed).
            try expectEndsWithAbort(fixture, after: sentBefore, "\(point)")
        case .reconcileRequired?:
            #expect(operation != .sign)
        default:
            Issue.record("\(point): \(String(describing: failure))")
        }

        // Trio: node A's step ended with the app's (the test client awaits it); B's ends when A's ABORT or the
        // link's close reaches it. Until then B still holds the key's lease and a reconcile would be KEY_BUSY
        // (retry later) — seen on a loaded machine. Wait for B's steps rather than for time.
        if let trio = fixture.trio { _ = await trio.peer.reports() }
        // Settle, as an app does at its next launch.
        let keyId = before?.keyId ?? fixture.storage.writes.dropFirst(writesBefore).first?.keyId
        guard let keyId else {
            for store in fixture.stores { #expect(try store.keyCount() == 0, "\(point): a node holds a key the app never staged") }
            return
        }
        var settled: Keyshare?
        do {
            settled = try await session.reconcileKeyshare(keyId: keyId)
        } catch {
            switch error {
            case .abortedKeyshare, .keyNotFound: settled = nil
            default: throw error
            }
        }
        #expect(try await fixture.storage.read(keyId: keyId)?.staged == nil, "\(point): still staged")
        for (n, store) in fixture.stores.enumerated() {
            #expect(try store.share(keyId: keyId)?.gen == settled.map { [UInt8]($0.generation) }, "\(point): app and node \(n) disagree")
        }
        if mode == .trio { #expect(settled != nil, "\(point): the existing key was lost") }
        if let settled {
            let signature = try await session.signature(keyshare: settled, message: message)
            #expect(try verifies(signature, message, settled))
        }
    }

    /// Duo: a node that stops answering mid-step: at the step's deadline the read is cancelled and the
    /// operation ends with `timeout` after the app's ABORT (before COMMIT: the key is unchanged), or
    /// with `reconcileRequired` (after COMMIT: in doubt, as session.md §7.2 says); either way reconcile settles
    /// the app and the node on one generation and the next refresh works.
    @Test(arguments: [CutPoint.read(0), .read(1), .read(2)])
    func theStepDeadlineEndsAStalledRefresh(point: CutPoint) async throws {
        let deadline = AppDeadlineSwitch()
        let fixture = try DuoFixture(algorithm: .eddsa, deadlines: deadline.deadlines)
        let keyshare = try await fixture.session.keygen()
        let sentBefore = fixture.client.sentMessages.count
        fixture.client.armHook { candidate in
            guard candidate == point else { return }
            deadline.expire()
            try await Task.sleep(for: .seconds(3600))   // a silent node: only the deadline's cancellation ends it
        }
        do {
            _ = try await fixture.session.keyRefresh(keyshare: keyshare)
            Issue.record("\(point): the refresh finished past its deadline")
        } catch .timeout {
            try expectEndsWithAbort(SessionFixture(deployment: .duo(fixture)), after: sentBefore, "\(point)")
            #expect(try fixture.store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        } catch .reconcileRequired {
            #expect(point == .read(2), "only after COMMIT is the outcome in doubt")
        }
        fixture.client.armHook(nil)
        deadline.reset()
        let settled = try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(try fixture.store.share(keyId: keyshare.keyId)?.gen == [UInt8](settled.generation))
        let refreshed = try await fixture.session.keyRefresh(keyshare: settled)
        #expect(refreshed.generation != settled.generation)
    }

    /// The app's last message since `index` (if it sent any) ends with an ABORT frame.
    func expectEndsWithAbort(_ fixture: SessionFixture, after index: Int, _ context: String) throws {
        guard let last = fixture.client.sentMessages.dropFirst(index).last else { return }
        let frames = try Frame.parseBundle([UInt8](last))
        #expect(frames.last?.header.kind == .abort, "\(context): the app's last message is \(frames.map(\.header.kind))")
    }

    static func run(_ operation: Operation, session: AppUnderTest, before: Keyshare?, message: Data) async throws {
        switch operation {
        case .keygen: _ = try await session.keygen()
        case .refresh: _ = try await session.keyRefresh(keyshare: try #require(before))
        case .sign:
            let keyshare = try #require(before)
            let signature = try await session.signatureWithEntryNode(keyshare: keyshare, message: message)
            #expect(try verifyECDSAOrEdDSA(signature, message, keyshare))
        }
    }

    func verifies(_ signature: Signature, _ message: Data, _ keyshare: Keyshare) throws -> Bool {
        try verifyECDSAOrEdDSA(signature, message, keyshare)
    }
}

func verifyECDSAOrEdDSA(_ signature: Signature, _ message: Data, _ keyshare: Keyshare) throws -> Bool {
    keyshare.algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                 : try verifyEdDSA(signature, message: message, keyshare: keyshare)
}

/// The app's step deadline in a test: never passes until `expire()`, then every pending and new wait
/// ends at once, until `reset()` — no race against the machine's speed.
final class AppDeadlineSwitch: Sendable {
    private let expired = LockedValue(false)

    var deadlines: AppDeadlines {
        AppDeadlines(sleep: { [self] _ in
            while !expired.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        })
    }

    func expire() { expired.withLock { $0 = true } }
    func reset() { expired.withLock { $0 = false } }
}
