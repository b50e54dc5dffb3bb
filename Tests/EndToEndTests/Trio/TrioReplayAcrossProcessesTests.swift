import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Security review finding 4 with real processes: two `silentshard node --role trio-a` processes on one
/// database (a cluster behind a balancer), each linked to its own process of node B (two B processes on
/// B's database), so no process has seen the other's sessions in memory. A SETUP the app sent through
/// the first A is captured and sent again to the second within its timestamp window: it answers
/// REJECT(REPLAY) from the shared durable replay store (before, each process had only its own in-memory
/// window and the copy was served). `DurableReplayTests` (SessionFlowTests) covers restarted A and B in process.
@Suite("Finding 4: a SETUP replayed to another trio A process of the cluster is REPLAY", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioReplayAcrossProcessesTests {
    /// The trio client that keeps every message it sends.
    final class RecordingClient: TrioNetworkClient, @unchecked Sendable {
        private let sent = LockedValue<[Data]>([])
        var messages: [Data] { sent.withLock { $0 } }

        override func send(bytes: Data) async throws {
            sent.withLock { $0.append(bytes) }
            try await super.send(bytes: bytes)
        }
    }

    @Test func setupReplayedToAnotherAProcessIsRejected() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: NodeProcess.binary.path), "build the silentshard product first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trio-replay-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        func write(_ name: String, _ text: String) throws { try (text + "\n").write(toFile: path(name), atomically: true, encoding: .utf8) }
        let cluster = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
        let now = UInt64(Date().timeIntervalSince1970)
        for (name, role) in [("a", NodeCertificate.Role.trioA), ("b", .trioB)] {
            let key = Ed25519.SigningKey()
            try write("\(name).key", Hex.encode(key.seed))
            try write("\(name).master", Hex.encode(SecureRandom.bytes(count: 32)))
            let certificate = NodeCertificate(role: role, groupID: group, nodeKey: key.verifyingKey, notBefore: now - 60,
                                              notAfter: now + 86_400, serial: 1, issuer: cluster)
            try write("\(name).cert", Hex.encode(certificate.encoded))
        }
        let clusterHex = Hex.encode(cluster.verifyingKey.bytes)
        // Every process of a role shares its key, certificate, master key and database.
        func arguments(_ name: String) -> [String] {
            ["--auth", "none", "--node-key", path("\(name).key"), "--database", path("\(name).sqlite"),
             "--master-key", path("\(name).master"), "--role", "trio-\(name)", "--cluster-key", clusterHex,
             "--certificate", path("\(name).cert")]
        }
        let firstB = try await NodeProcess.start(arguments: arguments("b") + ["--peer-listen", "127.0.0.1:0"])
        let secondB = try await NodeProcess.start(arguments: arguments("b") + ["--peer-listen", "127.0.0.1:0"])
        let firstA = try await NodeProcess.start(arguments: arguments("a") + ["--peer", "ws://127.0.0.1:\(try #require(firstB.peerPort))"])
        let secondA = try await NodeProcess.start(arguments: arguments("a") + ["--peer", "ws://127.0.0.1:\(try #require(secondB.peerPort))"])

        // A keygen through the first A process, its SETUP captured on the way.
        let client = RecordingClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(firstA.port)"))
        let session = SilentShard.EdDSA.trioInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: clusterHex,
                                                      networkClient: client, storageClient: InMemoryStorageClient())
        let keyshare = try await session.keygen()
        #expect(keyshare.partyCount == 3)
        let setup = try #require(client.messages.first)

        // The same bytes to the second A process, on the same route, seconds later.
        let replayer = TrioNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(secondA.port)"))
        try await replayer.connect(action: TrioAction.EdDSA.Keygen(), params: nil)
        try await replayer.send(bytes: setup)
        // Served, the answer would be A's ACCEPT bundle; refused, one REJECT frame.
        let answer = try Frame.parseBundle([UInt8](try await replayer.read()))
        try? await replayer.disconnect()
        let first = try #require(answer.first)
        #expect(answer.count == 1 && first.header.kind == .reject, "\(answer.map(\.header.kind))")
        #expect((try? RejectPayload(bytes: first.body))?.code == .replay)

        await firstA.kill()
        await secondA.kill()
        await firstB.kill()
        await secondB.kill()
    }
}
