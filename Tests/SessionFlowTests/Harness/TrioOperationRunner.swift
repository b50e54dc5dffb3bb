@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import Testing
import trio

/// Exhaustive variants of the fault suites run with `SILENTSHARD_LONG_TESTS=1`.
let longTests = ProcessInfo.processInfo.environment["SILENTSHARD_LONG_TESTS"] == "1"

/// The operations the trio fault suites drive.
enum TrioOperation: String, CaseIterable, Sendable, CustomStringConvertible {
    case keygen, refresh, importKey, signA, signB, preSign, recover, hardDerivation
    var description: String { rawValue }
    /// Needs an existing key first.
    var needsKey: Bool { ![.keygen, .importKey].contains(self) }
}

/// Runs one trio operation (with its own setup already done) and checks what it returns: every
/// signature is verified. Keeps what the operation produced for the checks after a fault.
struct TrioOperationRunner {
    let fixture: TrioFixture
    let algorithm: Keyshare.Algorithm
    let operation: TrioOperation
    /// The key that existed before (nil for keygen/import).
    let existing: Keyshare?
    /// Recover runs in a session that lost everything but its device key.
    let recoverStorage = RecordingStorage()
    let recoverSession: TrioSession?
    let privateKey: Data
    let chainCode = Data(SecureRandom.bytes(count: 32))
    static let hardPath = "m/44'/0'/3"

    /// Messages per link direction in one honest run of `operation` (on a fixture of its own), for the
    /// suites that then cut or damage each of them.
    static func honestMessageCounts(algorithm: Keyshare.Algorithm, operation: TrioOperation) async throws -> [LinkDirection: Int] {
        let honest = try TrioFixture(algorithm: algorithm)
        let measured = try await TrioOperationRunner(fixture: honest, algorithm: algorithm, operation: operation)
        honest.peer.cutter.reset()
        try await measured.run()
        return honest.peer.cutter.counts
    }

    init(fixture: TrioFixture, algorithm: Keyshare.Algorithm, operation: TrioOperation) async throws {
        self.fixture = fixture
        self.algorithm = algorithm
        self.operation = operation
        existing = operation.needsKey ? try await fixture.session.keygen() : nil
        privateKey = algorithm == .ecdsa ? Data(Secp256k1.Scalar.random().bytes) : Data(SecureRandom.bytes(count: 32))
        if operation == .recover {
            recoverSession = fixture.session(algorithm, storage: recoverStorage)
        } else {
            recoverSession = nil
        }
    }

    /// The session whose storage holds the key this operation changes.
    var session: TrioSession { recoverSession ?? fixture.session }
    var storage: RecordingStorage { operation == .recover ? recoverStorage : fixture.storage }

    /// Runs the operation once; returns the share it produced (share-changing operations).
    /// - Parameter current: the share to start from (a retried refresh starts from the settled one).
    @discardableResult
    func run(from current: Keyshare? = nil) async throws(SilentShardError) -> Keyshare? {
        let message = testMessage(algorithm, "fault \(operation)")
        switch operation {
        case .keygen: return try await session.keygen()
        case .refresh:
            let start: Keyshare
            if let current { start = current } else { start = try existingKey() }
            return try await session.keyRefresh(keyshare: start)
        case .importKey: return try await session.import(privateKey: privateKey, rootChainCode: chainCode)
        case .signA, .signB:
            let key = try existingKey()
            let signature = try await session.signature(keyshare: key, message: message, signer: operation == .signA ? .nodeA : .nodeB)
            try expectVerified(signature, message, key)
            return nil
        case .preSign:
            let key = try existingKey()
            let presignature = try await session.preSignature(keyshare: key)
            let signature = try await session.preSignatureFinal(preSignature: presignature, message: message)
            try expectVerified(signature, message, key)
            return nil
        case .recover: return try await session.recovery(keysharePublicKey: try existingKey().publicKey)
        case .hardDerivation: return try await session.hardDerivation(keyshare: try existingKey(), path: Self.hardPath)
        }
    }

    private func existingKey() throws(SilentShardError) -> Keyshare {
        guard let existing else { throw .invalidInput(reason: "test: no key") }
        return existing
    }

    private func expectVerified(_ signature: Signature, _ message: Data, _ key: Keyshare) throws(SilentShardError) {
        let valid = (try? verify(signature, message: message, keyshare: key)) ?? false
        #expect(valid, "\(operation): signature does not verify")
    }

    /// Every key id any party has seen: the existing key, the app's writes, both nodes' audit logs.
    func touchedKeyIds() throws -> Set<String> {
        var ids = Set((fixture.storage.writes + recoverStorage.writes).map { (record: KeyshareRecord) in record.keyId })
        if let existing { ids.insert(existing.keyId) }
        for store in [fixture.storeA, fixture.storeB] {
            for entry in try store.auditLog() { if let keyId = entry.keyId { ids.insert(keyId) } }
        }
        return ids
    }

    /// After a fault: reconciles every key the app holds a record of and checks session.md §7.2's consequences —
    /// the app's current generation is CURRENT at both nodes, nothing is left staged or PREPARED, no node
    /// holds a CURRENT generation of a key the app does not hold; every settled key signs (both signer
    /// sets, verified). Returns the settled share of each key.
    /// - Parameter ignoring: keys of other sessions (with their own storage) on the same nodes.
    func settleAndCheck(_ context: String, ignoring: Set<String> = []) async throws -> [String: Keyshare] {
        var settled: [String: Keyshare] = [:]
        for keyId in try touchedKeyIds().subtracting(ignoring) {
            let record = try await storage.read(keyId: keyId)
            var share: Keyshare?
            if record != nil {
                do {
                    share = try await session.reconcileKeyshare(keyId: keyId)
                } catch {
                    switch error {
                    case .abortedKeyshare, .keyNotFound: share = nil
                    default:
                        Issue.record("\(context): reconcile of \(keyId.prefix(8)) failed: \(error)")
                        continue
                    }
                }
            }
            let statusA = try fixture.storeA.status(keyId: keyId), statusB = try fixture.storeB.status(keyId: keyId)
            #expect(try await storage.read(keyId: keyId)?.staged == nil, "\(context): still staged at the app")
            if let share {
                let gen = [UInt8](share.generation)
                #expect(statusA.currentGen == gen && statusB.currentGen == gen,
                        "\(context): app current \(Hex.encode(gen).prefix(8)) vs A \(statusA.currentGen.map { Hex.encode($0).prefix(8) } ?? "-") B \(statusB.currentGen.map { Hex.encode($0).prefix(8) } ?? "-")")
                #expect(statusA.preparedGen == nil && statusB.preparedGen == nil, "\(context): PREPARED left after reconcile")
                for signer in [TrioSigner.nodeA, .nodeB] {
                    let message = testMessage(algorithm, "settled \(signer)")
                    do {
                        let signature = try await session.signature(keyshare: share, message: message, signer: signer)
                        #expect(try verify(signature, message: message, keyshare: share), "\(context): settled share's signature")
                    } catch {
                        Issue.record("\(context): settled share does not sign with \(signer): \(error)")
                    }
                }
                settled[keyId] = share
            } else if operation == .recover, keyId == existing?.keyId, record == nil {
                // The recovering app never staged: the nodes must still hold the old generation.
                let gen = existing.map { [UInt8]($0.generation) }
                #expect(statusA.currentGen == gen && statusB.currentGen == gen, "\(context): recover changed the nodes without the app")
            } else {
                #expect(statusA.currentGen == nil && statusB.currentGen == nil,
                        "\(context): a node holds a CURRENT share of a key the app does not hold")
            }
        }
        return settled
    }
}
