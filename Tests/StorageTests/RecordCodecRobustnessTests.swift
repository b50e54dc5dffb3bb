import Foundation
import MPCCrypto
import Testing
@testable import SilentShardCore

@Suite("Strict decoders never trap on arbitrary bytes")
struct RecordCodecRobustnessTests {
    @Test("record codec: random bytes and random mutations of valid records are typed errors")
    func recordCodec() throws {
        var random = DeterministicRandom(seed: 7)
        let valid = try KeyshareRecordCodec.encode(KeyshareRecord(keyId: keyA, staged: share(1, count: 40), current: share(2, count: 3)))
        #expect(try KeyshareRecordCodec.decode(valid, expectedKeyId: keyA).current == share(2, count: 3))
        for round in 0..<2000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = random.randomBytes(count: Int(random.next() % 200))
            } else {
                bytes = valid
                let index = Int(random.next() % UInt64(bytes.count))
                bytes[index] ^= UInt8(truncatingIfNeeded: random.next() | 1)
                if round % 3 == 0 { bytes = Array(bytes.prefix(index)) }
            }
            #expect(throws: StorageError.self) { try KeyshareRecordCodec.decode(bytes, expectedKeyId: keyA) }
        }
    }

    @Test("a valid checksum over malformed content is still rejected (lengths, flags, kinds, trailing bytes)")
    func checksummedGarbage() {
        func sealed(_ body: [UInt8]) -> [UInt8] { body + SHA256.hash(body) }
        let id = Array(keyA.utf8)
        let head = Array("SSKR".utf8) + [1, 0, UInt8(id.count)] + id
        let cases: [[UInt8]] = [
            head + [0],                                  // no share
            head + [4],                                  // unknown flag
            head + [2, 9, 0, 0, 0, 1, 0xAA],             // unknown kind
            head + [2, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0xAA], // length past the end
            head + [2, 1, 0, 0, 0, 1, 0xAA, 0],          // trailing byte
            Array("SSKR".utf8) + [2, 0, UInt8(id.count)] + id + [2, 1, 0, 0, 0, 0],  // version 2
        ]
        for bytes in cases {
            #expect(throws: StorageError.self) { try KeyshareRecordCodec.decode(sealed(bytes), expectedKeyId: keyA) }
        }
        #expect((try? KeyshareRecordCodec.decode(sealed(head + [2, 1, 0, 0, 0, 1, 0xAA]), expectedKeyId: keyA))?.current
                == StoredShare(kind: .ecdsa, bytes: [0xAA]))
    }
}
