@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Issue 10's first fault rule, in every mode, for every share-changing operation and signing, both algorithms.
///
/// The app's connection (`cutThenReconcileThenRetry`; duo: every message, trio: the first two sends and two
/// reads): cut before a message the app sends or reads. Afterwards:
/// * no party holds a promoted share another lacks — after `reconcileKeyshare`, the app's current
///   generation equals every node's (or none has the key);
/// * nothing is left staged; the settled share signs (verified);
/// * retrying the operation succeeds (an import that did commit is `keyAlreadyExists`).
///
/// Every trio link (`cutEveryLinkBeforeEveryMessage`: keygen, refresh, import, signing with each signer set,
/// preSign + final, recover, hard derivation): cut a link before message k, for every k the operation sends
/// in that direction (counted from an honest run, not a constant), on every link and either side: app → A,
/// A → app, A → B, B → A. Afterwards (`TrioOperationRunner.settleAndCheck`): reconcile brings all three parties to
/// one generation, no node holds a share the app lacks, nothing is left staged or PREPARED, the settled share
/// signs with both signer sets (verified), and retrying the operation succeeds. Default run: one message per
/// direction (the middle or the last, alternating). `SILENTSHARD_LONG_TESTS=1`: every message.
@Suite("Faults: a connection or link cut before every message", .heavy, .timeLimit(.minutes(30)))
struct CutEverywhereTests {
    enum Operation: String, CaseIterable, Sendable { case keygen, refresh, importKey, sign }

    static func points(_ mode: Keyshare.Mode) -> [CutPoint] {
        mode == .duo ? (0..<6).map { .send($0) } + (0..<5).map { .read($0) } : (0..<2).map { .send($0) } + (0..<2).map { .read($0) }
    }
    static let cases: [(Keyshare.Mode, Keyshare.Algorithm, Operation, CutPoint)] =
        Keyshare.Mode.allCases.flatMap { mode in
            [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { a in Operation.allCases.flatMap { o in points(mode).map { (mode, a, o, $0) } } }
        }

    @Test(arguments: cases)
    func cutThenReconcileThenRetry(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, operation: Operation,
                                   point: CutPoint) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        let session = fixture.session
        let before: Keyshare? = operation == .refresh || operation == .sign ? try await session.keygen() : nil
        let privateKey = algorithm == .ecdsa ? Data(Secp256k1.Scalar.random().bytes) : Data(SecureRandom.bytes(count: 32))
        let chainCode = Data(SecureRandom.bytes(count: 32))
        let message = algorithm == .ecdsa ? Data(repeating: 0x5C, count: 32) : Data("cut".utf8)
        let writesBefore = fixture.storage.writes.count

        let fired = LockedValue(false)
        fixture.client.armCut { candidate in
            candidate == point && fired.withLock { done in defer { done = true }; return !done }
        }
        func run() async throws {
            switch operation {
            case .keygen: _ = try await session.keygen()
            case .refresh: _ = try await session.keyRefresh(keyshare: try #require(before))
            case .importKey: _ = try await session.import(privateKey: privateKey, rootChainCode: chainCode)
            case .sign:
                let signature = try await session.signature(keyshare: try #require(before), message: message)
                #expect(try verifies(signature, message, try #require(before)))
            }
        }
        var failure: SilentShardError?
        do { try await run() } catch let error as SilentShardError { failure = error }
        fixture.client.armCut(nil)
        let cutFired = fired.withLock { $0 }
        if !cutFired { #expect(failure == nil, "no cut, yet \(String(describing: failure))") }
        // Every operation sends at least 3 and reads at least 2 messages: those cuts must happen.
        switch point {
        case .send(let k) where k < 3, .read(let k) where k < 2: #expect(cutFired)
        default: break
        }

        // The key this run touched: the existing one, or the one the app staged (if it got that far).
        let keyId = before?.keyId ?? fixture.storage.writes.dropFirst(writesBefore).first?.keyId
        guard let keyId else {
            // Nothing was ever staged: the node cannot have committed anything (it commits on COMMIT).
            #expect(try nodeKeyCount(fixture) == 0)
            if let trio = fixture.trio { _ = await trio.peer.reports() }
            try await run()
            return
        }
        // Settle (trio: once B's steps ended, so that B holds no lease on the key).
        if let trio = fixture.trio { _ = await trio.peer.reports() }
        var settled: Keyshare?
        do {
            settled = try await session.reconcileKeyshare(keyId: keyId)
        } catch {
            // The first generation was rolled back — now, or already by the operation's own in-doubt
            // reconcile (then the record is gone): there is no key.
            switch error {
            case .abortedKeyshare, .keyNotFound: settled = nil
            default: throw error
            }
        }
        let record = try await fixture.storage.read(keyId: keyId)
        #expect(record?.staged == nil, "\(point): still staged")
        for (n, store) in fixture.stores.enumerated() {
            let nodeGen = try store.share(keyId: keyId)?.gen
            #expect(nodeGen == settled.map { [UInt8]($0.generation) }, "\(point): app and node \(n) disagree")
        }
        if let settled {
            if let before { #expect(settled.publicKey == before.publicKey) }
            let signature = try await session.signature(keyshare: settled, message: message)
            #expect(try verifies(signature, message, settled))
        }
        // Retry.
        switch operation {
        case .importKey where settled != nil:
            await #expect(throws: SilentShardError.keyAlreadyExists) { try await run() }
        case .refresh:
            let refreshed = try await session.keyRefresh(keyshare: try #require(settled))
            let signature = try await session.signature(keyshare: refreshed, message: message)
            #expect(try verifies(signature, message, refreshed))
        default:
            try await run()
        }
    }

    func verifies(_ signature: Signature, _ message: Data, _ keyshare: Keyshare) throws -> Bool {
        keyshare.algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                     : try verifyEdDSA(signature, message: message, keyshare: keyshare)
    }

    /// Keys held by any node.
    func nodeKeyCount(_ fixture: SessionFixture) throws -> Int {
        try fixture.stores.reduce(0) { try $0 + $1.keyCount() }
    }

    static let linkCases: [(Keyshare.Algorithm, TrioOperation)] =
        TrioOperation.allCases.map { (.ecdsa, $0) } + TrioOperation.allCases.filter { $0 != .hardDerivation }.map { (.eddsa, $0) }

    /// The indices of a direction's `count` messages a run covers: all (long run), or one — the middle
    /// or the last, alternating over directions and operations (`salt`).
    static func sample(_ count: Int, salt: Int) -> [Int] {
        guard count > 0 else { return [] }
        return longTests ? Array(0..<count) : [salt % 2 == 0 ? count / 2 : count - 1]
    }

    @Test(.serialized, arguments: linkCases)
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
