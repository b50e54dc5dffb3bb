import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// session.md §5.3/§9.6: a device clock outside the node's ±120 s window. The node's REJECT(STALE_TIMESTAMP) is
/// signed and bound to the app's SETUP, so the app retries once with the node's time and keeps using
/// the correction — a phone with a wrong clock still works.
@Suite("Duo: device clock skew is corrected from the node's authenticated time", .heavy, .timeLimit(.minutes(30)))
struct ClockSkewTests {
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa], [Int64(-3_600_000), 600_000])
    func skewedDeviceClock(algorithm: Keyshare.Algorithm, nodeAheadBy milliseconds: Int64) async throws {
        let nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-skew-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
        let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow(), clock: {
            UInt64(Int64(Date().timeIntervalSince1970 * 1000) + milliseconds)
        })
        let client = LoopbackClient(mode: .duo, runner: runner)
        let cloudKey = Hex.encode(nodeKey.verifyingKey.bytes), storage = InMemoryStorageClient()
        let session = algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                             storageClient: storage, networkClient: client, actionProvider: .ecdsa)
            : SilentShard.EdDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                             storageClient: storage, networkClient: client, actionProvider: .eddsa)
        let keyshare = try await session.keygen()
        // The first attempt was refused (nothing stored), the retry went through.
        #expect(client.reports.first == .rejected(.staleTimestamp))
        let message = algorithm == .ecdsa ? Data(repeating: 7, count: 32) : Data("skew".utf8)
        let signature = try await session.signature(keyshare: keyshare, message: message)
        #expect(algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                    : try verifyEdDSA(signature, message: message, keyshare: keyshare))
        // The correction stays: no further STALE_TIMESTAMP.
        #expect(client.reports.filter { $0 == .rejected(.staleTimestamp) }.count == 1)
    }
}
