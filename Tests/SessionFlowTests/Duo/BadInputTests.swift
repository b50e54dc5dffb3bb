import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// Issue 10's bad-input rule for duo, on the wire between a real app session and a real node runner:
/// each message the app sends in keygen and sign is, once, truncated, bit-flipped (header, middle,
/// last byte), duplicated, has its frames reordered, or is replaced by the same message of an earlier
/// session. The receiver answers with a typed error (the app sees a `SilentShardError`), the node never
/// commits anything the app does not hold, and afterwards the key works: reconcile agrees and the next
/// operation succeeds.
@Suite("Duo bad input: every app and node message mutated", .heavy, .timeLimit(.minutes(30)))
struct BadInputTests {
    typealias Mutation = MessageMutation
    enum Operation: String, CaseIterable, Sendable { case keygen, sign }

    static let cases: [(Keyshare.Algorithm, Operation, Mutation, Int)] =
        [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { algorithm in
            Operation.allCases.flatMap { operation in
                Mutation.allCases.flatMap { mutation in (0..<4).map { (algorithm, operation, mutation, $0) } }
            }
        }

    @Test(arguments: cases)
    func mutatedMessage(algorithm: Keyshare.Algorithm, operation: Operation, mutation: Mutation, index: Int) async throws {
        try await exercise(algorithm: algorithm, operation: operation, mutation: mutation, index: index, appSends: true)
    }

    static let nodeCases: [(Keyshare.Algorithm, Operation, Mutation, Int)] =
        [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { algorithm in
            Operation.allCases.flatMap { operation in
                [Mutation.truncate, .flipMiddle, .flipLast, .duplicate, .replayEarlierSession].flatMap { mutation in
                    (0..<3).map { (algorithm, operation, mutation, $0) }
                }
            }
        }

    /// The same for what the node sends: the app rejects it with a typed error and stays consistent.
    @Test(arguments: nodeCases)
    func mutatedNodeMessage(algorithm: Keyshare.Algorithm, operation: Operation, mutation: Mutation, index: Int) async throws {
        try await exercise(algorithm: algorithm, operation: operation, mutation: mutation, index: index, appSends: false)
    }

    /// One run: an honest operation first (the replay source), then the same operation with message
    /// `index` of one direction (the app's sends, or what the app reads) mutated once; then checks.
    func exercise(algorithm: Keyshare.Algorithm, operation: Operation, mutation: Mutation, index: Int,
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
        let fixture = appSends ? try DuoFixture(algorithm: algorithm, tamperSend: hook)
                               : try DuoFixture(algorithm: algorithm, tamper: hook)
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
            #expect(try fixture.store.share(keyId: keyId)?.gen == settled.map { [UInt8]($0.generation) })
            #expect(try await fixture.storage.read(keyId: keyId)?.staged == nil)
            if let settled { #expect(try verifies(try await session.signature(keyshare: settled, message: message), settled)) }
        }
        if let produced { #expect(try verifies(try await session.signature(keyshare: produced, message: message), produced)) }
        // The node keeps serving: the existing key still signs.
        #expect(try verifies(try await session.signature(keyshare: existing, message: message), existing))
    }
}
