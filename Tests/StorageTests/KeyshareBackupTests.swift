import Foundation
import MPCCrypto
import Testing
@testable import SilentShardCore

@Suite("KeyshareBackup: Argon2id + XChaCha20-Poly1305")
struct KeyshareBackupTests {
    /// Small limits keep the suite fast; the format and code paths are those of `.moderate`.
    static let fast = Argon2id.Limits(opsLimit: 1, memLimit: 8 << 20)
    let secret = Data((0..<700).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    @Test("round trip; fresh salt and nonce each time; NFC-normalized password")
    func roundTrip() throws {
        let blob = try KeyshareBackup.seal(secret, password: "caf\u{E9} horse", limits: Self.fast)
        #expect(try KeyshareBackup.open(blob, password: "cafe\u{301} horse") == secret)
        let again = try KeyshareBackup.seal(secret, password: "caf\u{E9} horse", limits: Self.fast)
        #expect(blob != again)
        #expect(blob.count == KeyshareBackup.headerByteCount + secret.count + 16)
        #expect(blob.range(of: secret.prefix(32)) == nil)
    }

    @Test("interactive limits round-trip (the documented mobile setting)")
    func interactive() throws {
        let blob = try KeyshareBackup.seal(secret, password: "pw", limits: .interactive)
        #expect(try KeyshareBackup.open(blob, password: "pw") == secret)
    }

    @Test("wrong password is incorrectPassword")
    func wrongPassword() throws {
        let blob = try KeyshareBackup.seal(secret, password: "right", limits: Self.fast)
        #expect(throws: StorageError.incorrectPassword) { try KeyshareBackup.open(blob, password: "wrong") }
        #expect(throws: StorageError.incorrectPassword) { try KeyshareBackup.open(blob, password: "") }
    }

    @Test("every altered byte is a typed error; ciphertext changes are backupTampered")
    func tamper() throws {
        let blob = [UInt8](try KeyshareBackup.seal(secret, password: "pw", limits: Self.fast))
        for index in stride(from: 0, to: blob.count, by: 11) {
            var altered = blob
            altered[index] ^= 0x01
            do {
                _ = try KeyshareBackup.open(Data(altered), password: "pw")
                Issue.record("byte \(index) altered without detection")
            } catch {
                if index >= KeyshareBackup.headerByteCount { #expect(error == .backupTampered) }
            }
        }
        #expect(throws: StorageError.backupTampered) {
            try KeyshareBackup.open(Data(blob.dropLast()), password: "pw")
        }
        #expect(throws: StorageError.self) { try KeyshareBackup.open(Data(blob.prefix(40)), password: "pw") }
        #expect(throws: StorageError.self) { try KeyshareBackup.open(Data(), password: "pw") }
    }

    @Test("a blob demanding absurd memory is refused before hashing")
    func absurdLimits() throws {
        var blob = [UInt8](try KeyshareBackup.seal(secret, password: "pw", limits: Self.fast))
        blob[11...14] = [0xFF, 0xFF, 0xFF, 0xFF]  // memLimit KiB
        #expect(throws: StorageError.unsupportedBackup(reason: "Argon2id limits out of bounds")) {
            try KeyshareBackup.open(Data(blob), password: "pw")
        }
    }
}
