import Foundation
import Testing
@testable import SilentShardCore

@Suite("StorageClient built-ins: round trips, staging, key ids")
struct StorageClientTests {
    @Test("write, read, overwrite and delete round-trip in every built-in")
    func roundTrip() async throws {
        for (name, store) in try builtInStores() {
            #expect(try await store.read(keyId: keyA) == nil, "\(name)")
            let record = KeyshareRecord(keyId: keyA, staged: share(1, kind: .eddsa), current: share(2))
            try await store.write(record)
            #expect(try await store.read(keyId: keyA) == record, "\(name)")
            #expect(try await store.read(keyId: keyB) == nil, "\(name)")
            let replaced = KeyshareRecord(keyId: keyA, current: share(3, count: 5000))
            try await store.write(replaced)
            #expect(try await store.read(keyId: keyA) == replaced, "\(name)")
            try await store.delete(keyId: keyA)
            #expect(try await store.read(keyId: keyA) == nil, "\(name)")
            try await store.delete(keyId: keyA)  // deleting a missing record is fine
        }
    }

    @Test("stage keeps current; promote moves staged to current; discardStaged rolls back")
    func stagePromoteDiscard() async throws {
        for (name, store) in try builtInStores() {
            try await store.stage(keyId: keyA, share(1))
            #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, staged: share(1)), "\(name)")
            #expect(try await store.promote(keyId: keyA) == share(1), "\(name)")
            #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(1)), "\(name)")
            #expect(await storageError { try await store.promote(keyId: keyA) } == .nothingStaged(keyId: keyA))

            try await store.stage(keyId: keyA, share(2))
            #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, staged: share(2), current: share(1)))
            try await store.discardStaged(keyId: keyA)
            #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(1)), "\(name)")

            // An aborted keygen leaves no record at all.
            try await store.stage(keyId: keyB, share(9))
            try await store.discardStaged(keyId: keyB)
            #expect(try await store.read(keyId: keyB) == nil, "\(name)")
            #expect(await storageError { try await store.promote(keyId: keyB) } == .nothingStaged(keyId: keyB))
        }
    }

    @Test("an empty record is refused")
    func emptyRecord() async throws {
        for (_, store) in try builtInStores() {
            #expect(await storageError { try await store.write(KeyshareRecord(keyId: keyA)) } == .emptyRecord(keyId: keyA))
        }
    }

    @Test("path traversal and other malformed key ids are rejected by every built-in")
    func invalidKeyIds() async throws {
        let bad = ["", "../etc/passwd", "..", "ab/../cd", "/abs", "abc", "zz", "ab\u{0}cd", "ab cd", "ab/cd",
                   "~ss/presig/../x", "~ss/ban/", "~ss/other/abcd", String(repeating: "a", count: 258), "ａｂ"]
        for (name, store) in try builtInStores() {
            for keyId in bad {
                #expect(await storageError { _ = try await store.read(keyId: keyId) } == .invalidKeyId, "\(name) \(keyId)")
                #expect(await storageError { try await store.write(KeyshareRecord(keyId: keyId, current: share(1))) }
                        == .invalidKeyId, "\(name) \(keyId)")
                #expect(await storageError { try await store.delete(keyId: keyId) } == .invalidKeyId, "\(name) \(keyId)")
            }
        }
    }

    @Test("reserved ids and uppercase hex are accepted; uppercase names the same record")
    func reservedAndUppercase() async throws {
        let presig = KeyId.presignaturePrefix + String(repeating: "0f", count: 32)
        let ban = KeyId.banPrefix + String(repeating: "04", count: 65)
        for (name, store) in try builtInStores() {
            try await store.write(KeyshareRecord(keyId: presig, staged: share(7, kind: .sdkRecord)))
            try await store.write(KeyshareRecord(keyId: ban, current: share(8, kind: .sdkRecord)))
            #expect(try await store.read(keyId: presig)?.staged == share(7, kind: .sdkRecord), "\(name)")
            #expect(try await store.read(keyId: ban)?.current == share(8, kind: .sdkRecord), "\(name)")
            try await store.write(KeyshareRecord(keyId: keyA.uppercased(), current: share(5)))
            #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(5)), "\(name)")
        }
    }

    @Test("descriptions and reflection show sizes, never share bytes")
    func redaction() {
        let record = KeyshareRecord(keyId: keyA, staged: share(0xEE, count: 4), current: share(0xEE, count: 4))
        var dumped = ""
        dump(record, to: &dumped)
        for text in [record.description, String(reflecting: record), "\(record)", dumped] {
            #expect(!text.contains("238") && !text.lowercased().contains("eeee"))
        }
        #expect(record.description.contains("4 bytes"))
    }
}
