@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import Testing

/// `silentshard node restore-fence` (second security review finding 1): run against a restored database,
/// it invalidates every presignature stored before, records the fence and prints what it did.
@Suite("Node command line: restore-fence", .serialized, .timeLimit(.minutes(30)))
struct RestoreFenceCommandTests {
    @Test(.timeLimit(.minutes(2)))
    func finding1_restoreFenceCommandInvalidatesPresignatures() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: TrioCommandLineTests.binary.path), "build the silentshard product first")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("restore-fence-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = directory.appendingPathComponent("node.sqlite").path
        let keyFile = directory.appendingPathComponent("master.key").path
        let masterKeyBytes = SecureRandom.bytes(count: 32)
        try (Hex.encode(masterKeyBytes) + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        let masterKey = try NodeMasterKey(bytes: masterKeyBytes)
        let keyId = String(repeating: "1a", count: 32), gen = [UInt8](repeating: 1, count: 32)
        do {
            let store = try NodeShareStore(path: database, masterKey: masterKey)
            try store.prepare(keyId: keyId, share: NodeKeyshare(gen: gen, kind: .ecdsa, bytes: [UInt8](repeating: 5, count: 64),
                                                                digest: [UInt8](repeating: 0xD0, count: 32)), party: "node 1")
            try store.commit(keyId: keyId, gen: gen, digest: [UInt8](repeating: 0xD0, count: 32), party: "app", owner: "o")
            for id in [UInt8(1), 2] {
                try store.storePresignature(NodePresignature(id: [UInt8](repeating: id, count: 32), keyId: keyId, gen: gen, party: 1,
                                                             deviceKey: [UInt8](repeating: 0xD1, count: 32),
                                                             expiresAt: Date().addingTimeInterval(3600), secret: [1, 2, 3]))
            }
        }
        let refused = try await TrioCommandLineTests.run(["node", "restore-fence", "--database", database])
        #expect(refused.status == 2)
        let fenced = try await TrioCommandLineTests.run(["node", "restore-fence", "--database", database, "--master-key", keyFile,
                                                         "--reason", "restored from last night's backup"])
        #expect(fenced.status == 0)
        #expect(fenced.output.contains("presignatures invalidated: 2"), "\(fenced.output)")
        let store = try NodeShareStore(path: database, masterKey: masterKey)
        #expect(try store.presignatureCount(keyId: keyId) == 0)
        let fences = try store.storeFences()
        #expect(fences.count == 1 && fences.first?.reason == "operator: restored from last night's backup")
        #expect(try store.auditLog().contains { $0.operation == "restore fence" })
    }
}
