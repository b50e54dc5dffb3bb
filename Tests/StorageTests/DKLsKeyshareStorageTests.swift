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

    @Test("a protocol-v1 (KOS) DKLs23 keyshare is refused as an unsupported version, not as corrupt")
    func protocolV1KeyshareIsRefused() throws {
        var rng = DeterministicRandom(seed: 24)
        var bytes = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)[0].serialized()
        #expect(bytes[0] == 2)
        bytes[0] = 1
        #expect(throws: SilentShardError.invalidKeyshare(reason: "DKLs23 keyshare format version 1 is not supported (this SDK reads version 2)")) {
            try Keyshare(algorithm: .ecdsa, mode: .duo, protocolBytes: bytes)
        }
        bytes[0] = 2
        bytes[300] ^= 1
        #expect(throws: SilentShardError.invalidKeyshare(reason: "DKLs23 keyshare does not decode")) {
            try Keyshare(algorithm: .ecdsa, mode: .duo, protocolBytes: bytes)
        }
    }
}
