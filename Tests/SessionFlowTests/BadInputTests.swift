@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Issue 10's bad-input rule, on the wire between a real app session and real node runners.
///
/// The app's link (both modes): each message the app sends in keygen and sign is, once, truncated,
/// bit-flipped (header, middle, last byte), duplicated, has its frames reordered, or is replaced by the same
/// message of an earlier session; so is what the entry node sends the app. The receiver answers with a typed
/// error (the app sees a `SilentShardError`), no node commits anything the app does not hold, and afterwards the
/// key works: reconcile agrees and the next operation succeeds. Duo: every message of the first four (app) or
/// three (node); trio: the first message of each direction (its every link is `mutateEveryMessage`'s).
///
/// Every trio link (app → A, A → app, A → B, B → A), `mutateEveryMessage`: one message is mutated likewise or
/// replaced by the same message of the previous session on the same nodes. The mutation must be detected (the
/// operation fails with a typed `SilentShardError`, or a node's report shows it did not finish as in an honest
/// run), no party is left inconsistent (`settleAndCheck`: after reconcile one generation everywhere, nothing
/// staged or PREPARED, the settled key signs), node A keeps serving an honest session running concurrently on
/// another key, and the operation then succeeds. (Reversing a bundle whose frames all belong to different
/// streams is no fault — session.md §3.4 — and need not be noticed.) Default run: EdDSA keygen (every mutation
/// on every link) and ECDSA signing with B (three mutations on every link), one message per case;
/// `SILENTSHARD_LONG_TESTS=1`: both algorithms, both operations, every mutation, every message.
@Suite("Bad input: every app and node message mutated, every link", .heavy, .timeLimit(.minutes(30)))
struct BadInputTests {
    typealias Mutation = MessageMutation
    enum Operation: String, CaseIterable, Sendable { case keygen, sign }

    /// The first `count` message indices in duo, the first one in trio.
    static func indices(_ mode: Keyshare.Mode, _ count: Int) -> Range<Int> { mode == .duo ? 0..<count : 0..<1 }

    static let cases: [(Keyshare.Mode, Keyshare.Algorithm, Operation, Mutation, Int)] =
        Keyshare.Mode.allCases.flatMap { mode in
            [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { algorithm in
                Operation.allCases.flatMap { operation in
                    Mutation.allCases.flatMap { mutation in indices(mode, 4).map { (mode, algorithm, operation, mutation, $0) } }
                }
            }
        }

    @Test(arguments: cases)
    func mutatedMessage(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, operation: Operation, mutation: Mutation,
                        index: Int) async throws {
        try await exercise(mode: mode, algorithm: algorithm, operation: operation, mutation: mutation, index: index, appSends: true)
    }

    static let nodeCases: [(Keyshare.Mode, Keyshare.Algorithm, Operation, Mutation, Int)] =
        Keyshare.Mode.allCases.flatMap { mode in
            [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { algorithm in
                Operation.allCases.flatMap { operation in
                    [Mutation.truncate, .flipMiddle, .flipLast, .duplicate, .replayEarlierSession].flatMap { mutation in
                        indices(mode, 3).map { (mode, algorithm, operation, mutation, $0) }
                    }
                }
            }
        }

    /// The same for what the entry node sends: the app rejects it with a typed error and stays consistent.
    @Test(arguments: nodeCases)
    func mutatedNodeMessage(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, operation: Operation, mutation: Mutation,
                            index: Int) async throws {
        try await exercise(mode: mode, algorithm: algorithm, operation: operation, mutation: mutation, index: index, appSends: false)
    }

    /// One run: an honest operation first (the replay source), then the same operation with message
    /// `index` of one direction (the app's sends, or what the app reads) mutated once; then checks.
    func exercise(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, operation: Operation, mutation: Mutation, index: Int,
                  appSends: Bool) async throws {
        let armed = LockedValue(false), fired = LockedValue(false)
        let earlier = LockedValue<[Int: Data]>([:])   // the previous connection's messages by index
        let current = LockedValue<[Int: Data]>([:])
        let hook: @Sendable (Int, Data) -> Data = { messageIndex, data in
            if messageIndex == 0 {
                // A new connection: what the last one carried becomes "an earlier session".
                let last = current.withLock { messages in defer { messages = [:] }; return messages }
                if !last.isEmpty { earlier.withLock { $0 = last } }
            }
            current.withLock { $0[messageIndex] = data }
            guard armed.withLock({ $0 }), messageIndex == index,
                  fired.withLock({ done in defer { done = true }; return !done })
            else { return data }
            return mutation.apply(to: data, earlier: earlier.withLock { $0[messageIndex] })
        }
        let fixture = appSends ? try SessionFixture(mode: mode, algorithm: algorithm, tamperAppSends: hook)
                               : try SessionFixture(mode: mode, algorithm: algorithm, tamperAppReads: hook)
        let session = fixture.session
        let message = algorithm == .ecdsa ? Data(repeating: 0x3C, count: 32) : Data("bad input".utf8)
        func verifies(_ signature: Signature, _ keyshare: Keyshare) throws -> Bool {
            algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                : try verifyEdDSA(signature, message: message, keyshare: keyshare)
        }
        let existing = try await session.keygen()
        if operation == .sign { #expect(try verifies(try await session.signature(keyshare: existing, message: message), existing)) }

        armed.withLock { $0 = true }
        var produced: Keyshare?
        do {
            switch operation {
            case .keygen: produced = try await session.keygen()
            case .sign: #expect(try verifies(try await session.signature(keyshare: existing, message: message), existing))
            }
        } catch {
            // A typed error is the expected outcome; its description names no secret (checked elsewhere).
            #expect(!String(describing: error).isEmpty)
        }
        armed.withLock { $0 = false }
        // Every operation sends ≥ 3 messages and reads ≥ 2 (EdDSA signing reads 2): those must be hit.
        if index < (appSends ? 3 : 2) { #expect(fired.withLock { $0 }, "the mutation was applied") }

        // Consistency: every key the app staged or holds agrees with the node after reconcile.
        for keyId in Set(fixture.storage.writes.map { (record: KeyshareRecord) in record.keyId }) {
            var settled: Keyshare?
            do { settled = try await session.reconcileKeyshare(keyId: keyId) } catch {
                switch error {
                case .abortedKeyshare, .keyNotFound: settled = nil
                default: throw error
                }
            }
            for store in fixture.stores { #expect(try store.share(keyId: keyId)?.gen == settled.map { [UInt8]($0.generation) }) }
            #expect(try await fixture.storage.read(keyId: keyId)?.staged == nil)
            if let settled { #expect(try verifies(try await session.signature(keyshare: settled, message: message), settled)) }
        }
        if let produced { #expect(try verifies(try await session.signature(keyshare: produced, message: message), produced)) }
        // The node keeps serving: the existing key still signs.
        #expect(try verifies(try await session.signature(keyshare: existing, message: message), existing))
    }

    static let linkCases: [(Keyshare.Algorithm, TrioOperation)] = longTests
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

    @Test(.serialized, arguments: linkCases)
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
            if mutation == .reorder { isFault.withLock { $0 = BadInputTests.reorderIsAFault(data) } }
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
