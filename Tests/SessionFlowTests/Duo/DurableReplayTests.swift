import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// session.md §9.6: the replay store lives in the node's database, so a restarted node (a fresh in-memory
/// `ReplayWindow`) or another process on the same database still refuses a SETUP seen before.
@Suite("Duo node runner: durable replay store", .heavy, .timeLimit(.minutes(30)))
struct DurableReplayTests {
    @Test func setupReplayedToARestartedNodeIsRejected() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        _ = try await fixture.session.keygen()
        let setup = try #require(fixture.client.sentMessages.first)
        let restarted = NodeStepRunner(nodeKey: fixture.nodeKey, store: fixture.store, replayWindow: try ReplayWindow(),
                                      clock: fixture.clock.read)
        let connection = try await ScriptedConnection(messages: [setup])
        let report = await restarted.run(connection: connection,
                                         route: NodeStepRoute(algorithm: .ecdsa, operation: .keygen, params: nil))
        #expect(report == .rejected(.replay))
        #expect(connection.sentFrames.first?.header.kind == .reject)
    }

    @Test func storeForgetsIdsAfterTheirRetention() throws {
        let directory = NSTemporaryDirectory() + "silentshard-replay-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/node.sqlite"
        let masterKey = NodeMasterKey.random()
        let store = try NodeShareStore(path: path, masterKey: masterKey)
        let other = try NodeShareStore(path: path, masterKey: masterKey)
        let id = InstanceID(checked: [UInt8](repeating: 0x5A, count: 32))
        try store.recordSessionInstance(id, nowMilliseconds: 1_000, retentionMilliseconds: 500)
        #expect(throws: NodeStoreError.replay) {
            try other.recordSessionInstance(id, nowMilliseconds: 1_499, retentionMilliseconds: 500)
        }
        try other.recordSessionInstance(id, nowMilliseconds: 1_500, retentionMilliseconds: 500)
        // An id of another size cannot reach the store: `InstanceID` has 32 bytes by construction.
        #expect(InstanceID([1, 2, 3]) == nil)
    }
}
