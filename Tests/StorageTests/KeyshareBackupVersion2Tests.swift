import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import Testing
@testable import SilentShardCore

/// `KeyshareBackup` version 2: a keyshare with its key id and generation in the authenticated header.
@Suite("KeyshareBackup version 2: backups that know their generation")
struct KeyshareBackupVersion2Tests {
    static let fast = Argon2id.Limits(opsLimit: 1, memLimit: 8 << 20)

    static func keyshare(seed: UInt64) throws -> Keyshare {
        var rng = DeterministicRandom(seed: seed)
        return try Keyshare(dkls: DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)[0], mode: .duo)
    }

    @Test func sealsAKeyshareWithItsKeyIdAndGeneration() throws {
        let keyshare = try Self.keyshare(seed: 41)
        let blob = try KeyshareBackup.seal(keyshare, password: "correct horse", limits: Self.fast)
        let info = try KeyshareBackup.info(blob)
        #expect(info == KeyshareBackup.Info(version: 2, keyId: keyshare.keyId, generation: keyshare.generation))
        let opened = try KeyshareBackup.openKeyshare(blob, password: "correct horse")
        #expect(opened == keyshare)
        #expect(opened.generation == keyshare.generation)
        // `open` gives the sealed serialization.
        #expect(try KeyshareBackup.open(blob, password: "correct horse") == keyshare.serialized())
        #expect(throws: StorageError.incorrectPassword) { try KeyshareBackup.openKeyshare(blob, password: "wrong") }
        #expect(!String(describing: info).contains(Hex.encode([UInt8](keyshare.serialized()).prefix(40))))
    }

    @Test func theKeyIdAndGenerationCannotBeChanged() throws {
        let keyshare = try Self.keyshare(seed: 42), other = try Self.keyshare(seed: 43)
        let blob = [UInt8](try KeyshareBackup.seal(keyshare, password: "pw", limits: Self.fast))
        let provenance = KeyshareBackup.headerByteCount
        // Any byte of the recorded key id or generation: the AEAD refuses (the header is its associated data).
        for index in [provenance, provenance + 31, provenance + 32, provenance + 63] {
            var altered = blob
            altered[index] ^= 0x01
            #expect(throws: StorageError.backupTampered) { try KeyshareBackup.openKeyshare(Data(altered), password: "pw") }
        }
        // Another key's id and generation pasted over the header: also refused.
        var swapped = blob
        swapped.replaceSubrange(provenance..<(provenance + 64), with: other.keyIdBytes + [UInt8](other.generation))
        #expect(try KeyshareBackup.info(Data(swapped)).generation == other.generation, "the header is readable, not trusted")
        #expect(throws: StorageError.backupTampered) { try KeyshareBackup.openKeyshare(Data(swapped), password: "pw") }
    }

    @Test func versionOneBlobsStillOpenButHoldNoGeneration() throws {
        let keyshare = try Self.keyshare(seed: 44)
        let blob = try KeyshareBackup.seal(keyshare.serialized(), password: "pw", limits: Self.fast)
        #expect(try KeyshareBackup.info(blob) == KeyshareBackup.Info(version: 1, keyId: nil, generation: nil))
        #expect(try KeyshareBackup.open(blob, password: "pw") == keyshare.serialized())
        #expect(throws: StorageError.unsupportedBackup(reason: "version 1 holds no keyshare record")) {
            try KeyshareBackup.openKeyshare(blob, password: "pw")
        }
    }

    @Test func truncatedAndForeignBlobsAreTypedErrors() throws {
        let keyshare = try Self.keyshare(seed: 45)
        let blob = [UInt8](try KeyshareBackup.seal(keyshare, password: "pw", limits: Self.fast))
        for length in [0, 4, 70, KeyshareBackup.headerByteCount + 10, KeyshareBackup.headerByteCount + 64 + 15] {
            #expect(throws: StorageError.self) { try KeyshareBackup.openKeyshare(Data(blob.prefix(length)), password: "pw") }
            #expect(throws: StorageError.self) { try KeyshareBackup.info(Data(blob.prefix(length))) }
        }
        var version3 = blob
        version3[4] = 3
        #expect(throws: StorageError.unsupportedBackup(reason: "unknown version")) { try KeyshareBackup.info(Data(version3)) }
    }

    @Test func backupRecordsRoundTripAndRejectAnythingElse() throws {
        let record = AppBackupRecord(generation: [UInt8](repeating: 7, count: 32), madeAtMilliseconds: 1_765_000_000_123)
        #expect(AppBackupRecord(encoded: record.encoded) == record)
        #expect(AppBackupRecord(encoded: Array(record.encoded.dropLast())) == nil)
        var wrongVersion = record.encoded
        wrongVersion[4] = 2
        #expect(AppBackupRecord(encoded: wrongVersion) == nil)
        #expect(try KeyId.canonical("~ss/backup/ABCD") == "~ss/backup/abcd")
        #expect(KeyId.fileStem("~ss/backup/abcd") == "backup-abcd")
    }
}
