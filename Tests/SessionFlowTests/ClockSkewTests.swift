import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// session.md §5.3/§9.6: a device clock outside the node's ±120 s window. The entry node's REJECT(STALE_TIMESTAMP) is
/// signed (duo: the node key; trio: A's certified key) and bound to the app's SETUP, so the app retries once
/// with the node's time and keeps using the correction — a phone with a wrong clock still works.
@Suite("Device clock skew is corrected from the node's authenticated time", .heavy, .timeLimit(.minutes(30)))
struct ClockSkewTests {
    /// Duo: a node on the wall clock shifted by `milliseconds`, reached through the public initiator
    /// (`SilentShard.duoInitiator`); trio: both nodes' clocks shifted (`TrioFixture(nodesAheadBy:)`).
    static func session(_ mode: Keyshare.Mode, _ algorithm: Keyshare.Algorithm,
                        nodeAheadBy milliseconds: Int64) throws -> (AppUnderTest, LoopbackClient) {
        switch mode {
        case .duo:
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
            return (.duo(session), client)
        case .trio:
            let fixture = try TrioFixture(algorithm: algorithm, nodesAheadBy: milliseconds)
            return (.trio(fixture.session), fixture.client)
        }
    }

    @Test(arguments: Keyshare.Mode.allCases, [(Keyshare.Algorithm.ecdsa, Int64(-3_600_000)), (.ecdsa, 600_000),
                                              (.eddsa, -3_600_000), (.eddsa, 600_000)])
    func skewedDeviceClock(mode: Keyshare.Mode, skew: (Keyshare.Algorithm, Int64)) async throws {
        let (algorithm, nodeAheadBy) = skew
        let (session, client) = try Self.session(mode, algorithm, nodeAheadBy: nodeAheadBy)
        let keyshare = try await session.keygen()
        // The first attempt was refused (nothing stored), the retry went through.
        #expect(client.reports.first == .rejected(.staleTimestamp))
        let message = testMessage(algorithm, "skew")
        for signature in try await session.signatureWithEachSigner(keyshare: keyshare, message: message) {
            #expect(try verify(signature, message: message, keyshare: keyshare))
        }
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.generation != keyshare.generation)
        // The correction stays: one STALE_TIMESTAMP in all.
        #expect(client.reports.filter { $0 == .rejected(.staleTimestamp) }.count == 1)
    }
}
