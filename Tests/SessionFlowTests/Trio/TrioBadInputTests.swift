@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Issue 10's bad-input rule for trio, on every link (app → A, A → app, A → B, B → A): one message is
/// truncated, bit-flipped (header, middle, last byte), duplicated, has its frames reordered, or is
/// replaced by the same message of the previous session on the same nodes. The mutation must be
/// detected (the operation fails with a typed `SilentShardError`, or a node's report shows it did not
/// finish as in an honest run), no party is left inconsistent (`settleAndCheck`: after reconcile one
/// generation everywhere, nothing staged or PREPARED, the settled key signs), node A keeps serving an
/// honest session running concurrently on another key, and the operation then succeeds. (Reversing a
/// bundle whose frames all belong to different streams is no fault — session.md §3.4 — and need not be noticed.)
///
/// Default run: EdDSA keygen (every mutation on every link) and ECDSA signing with B (three mutations
/// on every link), one message per case; `SILENTSHARD_LONG_TESTS=1`: both algorithms, both
/// operations, every mutation, every message.
@Suite("Trio bad input: every link, every mutation", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioBadInputTests {
    typealias Mutation = MessageMutation

    static let cases: [(Keyshare.Algorithm, TrioOperation)] = longTests
        ? [(.ecdsa, .keygen), (.ecdsa, .signB), (.eddsa, .keygen), (.eddsa, .signB)]
        : [(.eddsa, .keygen), (.ecdsa, .signB)]

    static func mutations(_ algorithm: Keyshare.Algorithm, _ operation: TrioOperation) -> [Mutation] {
        longTests || (algorithm, operation) == (.eddsa, .keygen) ? Mutation.allCases : [.truncate, .flipMiddle, .replayEarlierSession]
    }

    /// Whether reversing the bundle's frames changes the order within a stream (sender, receiver):
    /// frames of different streams may arrive in any order (session.md §3.4), so reversing those is no
    /// fault at all. A single-frame message is duplicated instead, which always is.
    static func reorderIsAFault(_ data: Data) -> Bool {
        guard let frames = try? Frame.parseBundle([UInt8](data)), frames.count >= 2 else { return true }
        let streams = frames.map { "\($0.header.sender)>\($0.header.receiver)" }
        return Set(streams).count < streams.count
    }

    @Test(arguments: cases)
    func mutateEveryMessage(algorithm: Keyshare.Algorithm, operation: TrioOperation) async throws {
        // Message counts per direction, from an honest run.
        let counts = try await TrioOperationRunner.honestMessageCounts(algorithm: algorithm, operation: operation)
        var covered = 0, failed = 0
        for (d, direction) in LinkDirection.allCases.enumerated() {
            let count = counts[direction, default: 0]
            guard count > 0 else { continue }
            for (m, mutation) in Self.mutations(algorithm, operation).enumerated() {
                let indices = longTests ? Array(0..<count) : [(m * 3 + d) % count]
                for index in indices {
                    covered += 1
                    if try await !mutateOnce(algorithm: algorithm, operation: operation, direction: direction, index: index,
                                             mutation: mutation) { failed += 1 }
                }
            }
        }
        print("trio bad input \(algorithm) \(operation): messages \(counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key)=\($0.value)" }), cases \(covered), operation failed in \(failed)")
    }

    /// One case; returns whether the mutated operation failed (rather than a node noticing alone).
    func mutateOnce(algorithm: Keyshare.Algorithm, operation: TrioOperation, direction: LinkDirection, index: Int,
                    mutation: Mutation) async throws -> Bool {
        let context = "\(algorithm) \(operation) \(mutation) \(direction)#\(index)"
        let fixture = try TrioFixture(algorithm: algorithm, frameTimeout: .seconds(30))
        let runner = try await TrioOperationRunner(fixture: fixture, algorithm: algorithm, operation: operation)
        // Another key, signed with concurrently through its own connection to the same node A.
        let probeClient = LoopbackClient(mode: .trio, runner: fixture.runnerA)
        let probeSession = fixture.session(algorithm, client: probeClient)
        let probeKey = try await probeSession.keygen()

        // The previous session: an honest run whose messages are the replay source.
        let earlier = LockedValue<[String: Data]>([:])
        fixture.peer.cutter.setRewrite { direction, i, data in
            earlier.withLock { $0["\(direction)#\(i)"] = data }
            return data
        }
        fixture.peer.cutter.reset()
        try await runner.run()
        let reportsBefore = (fixture.client.reports.count, await fixture.peer.reports().count)

        let fired = LockedValue(false), isFault = LockedValue(true)
        fixture.peer.cutter.setRewrite { d, i, data in
            guard d == direction, i == index, fired.withLock({ done in defer { done = true }; return !done }) else { return data }
            if mutation == .reorder { isFault.withLock { $0 = TrioBadInputTests.reorderIsAFault(data) } }
            return mutation.apply(to: data, earlier: earlier.withLock { $0["\(d)#\(i)"] })
        }
        fixture.peer.cutter.reset()
        let probeMessage = testMessage(algorithm, "probe")
        async let probe = probeSession.signature(keyshare: probeKey, message: probeMessage)
        let error = await failure { () throws(SilentShardError) in try await runner.run() }
        let probeSignature = try await probe
        #expect(try verify(probeSignature, message: probeMessage, keyshare: probeKey), "\(context): the concurrent session")
        fixture.peer.cutter.setRewrite(nil)
        #expect(fired.withLock { $0 }, "\(context): the mutation was applied")

        // Detected: a typed error at the app, or a node that did not end as in an honest run.
        let reportsA = fixture.client.reports.dropFirst(reportsBefore.0)
        let reportsB = await fixture.peer.reports().dropFirst(reportsBefore.1)
        let nodesClean = (reportsA + reportsB).allSatisfy { report in
            switch report {
            case .committed, .signed(confirmed: true), .relayed(completed: true): true
            default: false
            }
        }
        if isFault.withLock({ $0 }) {
            #expect(error != nil || !nodesClean,
                    "\(context): nobody noticed (A: \(Array(reportsA)), B: \(Array(reportsB)))")
        }

        _ = try await runner.settleAndCheck(context, ignoring: [probeKey.keyId])
        // Node A still serves the probe key, and the operation succeeds again.
        let after = try await probeSession.signature(keyshare: probeKey, message: probeMessage)
        #expect(try verify(after, message: probeMessage, keyshare: probeKey))
        do {
            try await runner.run()
        } catch {
            Issue.record("\(context): the operation after the mutation failed: \(error)")
        }
        return error != nil
    }
}
