import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import Testing
@testable import SilentShardCore

@Suite("Real keyshares through storage")
struct DKLsKeyshareStorageTests {
    @Test("a DKLs23 duo keyshare survives stage → promote → reopen → backup in every durable store")
    func dklsKeyshare() async throws {
        var rng = DeterministicRandom(seed: 23)
        let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let app = shares[0]
        let keyId = Hex.encode(app.keyId)
        let stored = StoredShare(kind: .ecdsa, bytes: app.serialized())
        let directory = scratchDirectory()
        let opens: [() throws -> any StorageClient] = [
            { try FileStorageClient(directory: directory + "/records") },
            { try SQLiteStorageClient(path: directory + "/records.sqlite") },
        ]
        for open in opens {
            try await open().stage(keyId: keyId.uppercased(), stored)
            try await open().promote(keyId: keyId)
            let record = try #require(try await open().read(keyId: keyId))
            #expect(record.staged == nil)
            let current = try #require(record.current)
            #expect(current.kind == .ecdsa)
            let decoded = try DKLsKeyshare(serialized: [UInt8](current.bytes))
            #expect(decoded.serialized() == app.serialized())
            #expect(decoded.keyId == app.keyId)
        }
        let blob = try KeyshareBackup.seal(stored.bytes, password: "correct horse",
                                           limits: Argon2id.Limits(opsLimit: 1, memLimit: 8 << 20))
        let restored = try KeyshareBackup.open(blob, password: "correct horse")
        #expect(try DKLsKeyshare(serialized: [UInt8](restored)).serialized() == app.serialized())
    }
}
