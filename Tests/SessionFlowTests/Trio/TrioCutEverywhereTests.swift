@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Issue 10's first fault rule for trio: for every operation (keygen, refresh, import, signing with
/// each signer set, preSign + final, recover, hard derivation) and both algorithms, cut a link before
/// message k, for every k the operation sends in that direction (counted from an honest run, not a
/// constant), on every link and either side: app → A, A → app, A → B, B → A. Afterwards
/// (`TrioOperationRunner.settleAndCheck`): reconcile brings all three parties to one generation, no node
/// holds a share the app lacks, nothing is left staged or PREPARED, the settled share signs with both
/// signer sets (verified), and retrying the operation succeeds.
///
/// Default run: one message per direction (the middle or the last, alternating). `SILENTSHARD_LONG_TESTS=1`:
/// every message.
@Suite("Trio faults: a link cut before every message", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioCutEverywhereTests {
    static let cases: [(Keyshare.Algorithm, TrioOperation)] =
        TrioOperation.allCases.map { (.ecdsa, $0) } + TrioOperation.allCases.filter { $0 != .hardDerivation }.map { (.eddsa, $0) }

    /// The indices of a direction's `count` messages a run covers: all (long run), or one — the middle
    /// or the last, alternating over directions and operations (`salt`).
    static func sample(_ count: Int, salt: Int) -> [Int] {
        guard count > 0 else { return [] }
        return longTests ? Array(0..<count) : [salt % 2 == 0 ? count / 2 : count - 1]
    }

    @Test(arguments: cases)
    func cutEveryLinkBeforeEveryMessage(algorithm: Keyshare.Algorithm, operation: TrioOperation) async throws {
        // An honest run counts the operation's messages per direction.
        let counts = try await TrioOperationRunner.honestMessageCounts(algorithm: algorithm, operation: operation)
        // The app's link always carries the SETUP (with the first round's broadcasts when that round is short
        // and the key's group is known: flight F1, session.md §5.2) and the nodes' answers; B's link only when B takes
        // part. With F1 an EdDSA preSign is one message from the app.
        #expect(counts[.appToA, default: 0] >= 1 && counts[.aToApp, default: 0] >= 1, "\(counts)")
        var covered = 0
        let operationIndex = TrioOperation.allCases.firstIndex(of: operation) ?? 0
        for (d, direction) in LinkDirection.allCases.enumerated() {
            for index in Self.sample(counts[direction, default: 0], salt: d + operationIndex) {
                covered += 1
                try await cutOnce(algorithm: algorithm, operation: operation, direction: direction, index: index)
            }
        }
        print("trio cut \(algorithm) \(operation): messages \(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key)=\($0.value)" }), cuts \(covered)")
    }

    func cutOnce(algorithm: Keyshare.Algorithm, operation: TrioOperation, direction: LinkDirection, index: Int) async throws {
        let context = "\(algorithm) \(operation) cut \(direction)#\(index)"
        let fixture = try TrioFixture(algorithm: algorithm, frameTimeout: .seconds(30))
        let runner = try await TrioOperationRunner(fixture: fixture, algorithm: algorithm, operation: operation)
        fixture.peer.cutter.reset(cut: (direction, index))
        let firstError = await failure { () throws(SilentShardError) in try await runner.run() }
        let fired = fixture.peer.cutter.fired
        fixture.peer.cutter.reset()
        _ = await fixture.peer.reports()
        #expect(fired, "\(context): the cut did not happen")
        if !fired { #expect(firstError == nil, "\(context): no cut, yet \(String(describing: firstError))") }

        let settled = try await runner.settleAndCheck(context)

        // Retry.
        do {
            let produced = try await runner.run(from: settled[runner.existing?.keyId ?? ""])
            if let produced {
                let message = testMessage(algorithm, "retried")
                let signature = try await runner.session.signature(keyshare: produced, message: message, signer: .nodeB)
                #expect(try verify(signature, message: message, keyshare: produced), "\(context): retried share signs")
            }
        } catch let error as SilentShardError {
            switch (operation, error) {
            case (.importKey, .keyAlreadyExists) where !settled.isEmpty: break
            default: Issue.record("\(context): retry failed: \(error) (first error \(String(describing: firstError)))")
            }
        }
    }
}
