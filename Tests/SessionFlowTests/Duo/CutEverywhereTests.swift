import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Issue 10's first fault rule for duo: for every share-changing operation and signing, both
/// algorithms, cut the connection before every message the app sends or reads. Afterwards:
/// * no party holds a promoted share the other lacks — after `reconcileKeyshare`, the app's current
///   generation equals the node's (or neither has the key);
/// * nothing is left staged; the settled share signs (verified);
/// * retrying the operation succeeds (an import that did commit is `keyAlreadyExists`).
@Suite("Duo faults: connection cut before every message", .heavy, .timeLimit(.minutes(30)))
struct CutEverywhereTests {
    enum Operation: String, CaseIterable, Sendable { case keygen, refresh, importKey, sign }

    static let points: [CutPoint] = (0..<6).map { .send($0) } + (0..<5).map { .read($0) }
    static let cases: [(Keyshare.Algorithm, Operation, CutPoint)] =
        [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { a in Operation.allCases.flatMap { o in points.map { (a, o, $0) } } }

    @Test(arguments: cases)
    func cutThenReconcileThenRetry(algorithm: Keyshare.Algorithm, operation: Operation, point: CutPoint) async throws {
        let fixture = try DuoFixture(algorithm: algorithm)
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
            try await run()
            return
        }
        // Settle.
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
        let nodeGen = try fixture.store.share(keyId: keyId)?.gen
        #expect(nodeGen == settled.map { [UInt8]($0.generation) }, "\(point): app and node disagree")
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

    func nodeKeyCount(_ fixture: DuoFixture) throws -> Int {
        try fixture.store.keyCount()
    }
}
