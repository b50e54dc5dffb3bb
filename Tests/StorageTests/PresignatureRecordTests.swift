import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import Testing

/// The app's presignature records (`PresignatureRecord`, `PresignatureSecrets`): every state round-trips,
/// decoding is strict (every truncation and any trailing byte is `corruptRecord`, never a trap), a record
/// stored under another id is `keyIdMismatch`, and the sealed secrets open only under the key of their
/// generation with their own header.
@Suite("Presignature records")
struct PresignatureRecordTests {
    static func header(generation: [UInt8] = Array(repeating: 7, count: 32)) -> PresignatureRecord.Header {
        PresignatureRecord.Header(id: SecureRandom.bytes(count: 32), keyId: SecureRandom.bytes(count: 32), generation: generation,
                                  algorithm: .ecdsa, signer: 2, chainPath: "m/44/60/0", derivedPublicKey: SecureRandom.bytes(count: 33),
                                  expiresAtMilliseconds: 1_800_000_000_000)
    }

    static func secrets() throws -> PresignatureSecrets {
        PresignatureSecrets(presignature: SecureRandom.bytes(count: 300),
                            finalKeys: try PreSignFinalKeys(signer: 2, requestKey: SecureRandom.bytes(count: 32),
                                                            responseKey: SecureRandom.bytes(count: 32)),
                            peerRound1: SecureRandom.bytes(count: 64))
    }

    static func storageKeyId(_ record: PresignatureRecord) -> String { KeyId.presignaturePrefix + Hex.encode(record.header.id) }

    @Test func everyStateRoundTrips() throws {
        let material = SecureRandom.bytes(count: 100)
        let header = Self.header()
        let key = PresignatureRecord.sealingKey(material: material, header: header)
        let secrets = try Self.secrets()
        var record = try PresignatureRecord.sealing(secrets.encoded(), header: header, key: key)
        let states: [PresignatureRecord.State] = [
            .ready, .finishing(message: SecureRandom.bytes(count: 32), request: SecureRandom.bytes(count: 250)),
        ]
        for state in states {
            record.state = state
            let decoded = try PresignatureRecord(bytes: record.encoded(), storageKeyId: Self.storageKeyId(record))
            #expect(decoded == record)
            let opened = try PresignatureSecrets(bytes: try decoded.openSecrets(key: key), signer: 2)
            #expect(opened.presignature == secrets.presignature && opened.peerRound1 == secrets.peerRound1)
            #expect(opened.finalKeys.storedKeys.request == secrets.finalKeys.storedKeys.request)
        }
        record.state = .finished(message: SecureRandom.bytes(count: 32), signature: SecureRandom.bytes(count: 65))
        record.sealedSecrets = []
        #expect(try PresignatureRecord(bytes: record.encoded(), storageKeyId: Self.storageKeyId(record)) == record)
        #expect(!record.description.contains(Hex.encode(Array(secrets.presignature.prefix(8)))))
    }

    @Test func decodingIsStrict() throws {
        let header = Self.header()
        var record = try PresignatureRecord.sealing(try Self.secrets().encoded(), header: header,
                                                    key: PresignatureRecord.sealingKey(material: [1], header: header))
        record.state = .finishing(message: [1, 2, 3], request: [4, 5])
        let bytes = record.encoded(), id = Self.storageKeyId(record)
        for length in 0..<bytes.count {
            #expect(throws: StorageError.self) { try PresignatureRecord(bytes: Array(bytes.prefix(length)), storageKeyId: id) }
        }
        #expect(throws: StorageError.self) { try PresignatureRecord(bytes: bytes + [0], storageKeyId: id) }
        // Stored under another presignature's id.
        #expect(throws: StorageError.keyIdMismatch(keyId: KeyId.presignaturePrefix + String(repeating: "ab", count: 32))) {
            try PresignatureRecord(bytes: bytes, storageKeyId: KeyId.presignaturePrefix + String(repeating: "ab", count: 32))
        }
        // A finished record that still has secrets, an unknown state, an unknown version.
        var finished = record
        finished.state = .finished(message: [1], signature: [2])
        #expect(throws: StorageError.self) { try PresignatureRecord(bytes: finished.encoded(), storageKeyId: id) }
        var altered = bytes
        altered[4] = 2
        #expect(throws: StorageError.self) { try PresignatureRecord(bytes: altered, storageKeyId: id) }
        #expect(throws: StorageError.self) { try PresignatureSecrets(bytes: [1, 0, 0], signer: 1) }
    }

    @Test func secretsOpenOnlyUnderTheirGenerationAndHeader() throws {
        let material = SecureRandom.bytes(count: 64)
        let header = Self.header()
        let key = PresignatureRecord.sealingKey(material: material, header: header)
        let record = try PresignatureRecord.sealing(try Self.secrets().encoded(), header: header, key: key)
        _ = try record.openSecrets(key: key)
        // Another generation of the key, or other key material: another sealing key.
        let otherGeneration = Self.header(generation: Array(repeating: 8, count: 32))
        var moved = header
        moved.generation = otherGeneration.generation
        #expect(PresignatureRecord.sealingKey(material: material, header: moved) != key)
        #expect(throws: StorageError.self) {
            try record.openSecrets(key: PresignatureRecord.sealingKey(material: material + [0], header: header))
        }
        // Any header field changed (path, signer, expiry, derived key): the secrets do not authenticate.
        var edits: [(inout PresignatureRecord.Header) -> Void] = []
        edits.append { $0.chainPath = "m/44/60/1" }
        edits.append { $0.signer = 1 }
        edits.append { $0.expiresAtMilliseconds += 1 }
        edits.append { $0.derivedPublicKey[0] ^= 1 }
        edits.append { $0.algorithm = .eddsa }
        for edit in edits {
            var changed = record
            edit(&changed.header)
            #expect(throws: StorageError.self) { try changed.openSecrets(key: key) }
        }
        var flipped = record
        flipped.sealedSecrets[30] ^= 1
        #expect(throws: StorageError.self) { try flipped.openSecrets(key: key) }
    }
}
