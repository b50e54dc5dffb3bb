import Foundation
import Testing
@testable import CloudNode
import SilentShardCore

/// Issue 34 item 3: a FINAL_REQUEST is authenticated on a read of its presignature before the consuming
/// transaction (`heldPresignatureSecret`), on SQLite and PostgreSQL alike.
@Suite("NodeShareStore: a held presignature's secret read without a write")
struct PresignatureSecretReadTests {
    static func row(_ id: UInt8) -> NodePresignature {
        NodePresignature(id: bytes32(id), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                         expiresAt: Date().addingTimeInterval(3600), secret: secretShare(id, count: 160))
    }

    @Test("issue 34 item 3: the held row's secret is read without a write; none once consumed, unknown or of another epoch",
          arguments: StoreBackend.allCases)
    func issue34_item3_heldSecretIsReadWithoutWriting(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)
        try store.storePresignature(Self.row(1))
        try store.storePresignature(Self.row(2))
        let writes = store.writeTransactionCount
        let held = try #require(try store.heldPresignatureSecret(id: bytes32(1)))
        #expect(held.secret == secretShare(1, count: 160))
        #expect(held.presignature.keyId == keyA && held.presignature.gen == bytes32(1) && held.presignature.party == 1)
        #expect(held.presignature.deviceKey == device)
        #expect(try store.heldPresignatureSecret(id: bytes32(9)) == nil, "an id the store never had")
        #expect(store.writeTransactionCount == writes, "reads only")

        _ = try store.consumePresignature(id: bytes32(1), requestHash: bytes32(0xA1)) { _, _ in [1] }
        #expect(try store.heldPresignatureSecret(id: bytes32(1)) == nil, "consumed")
        // A row of another presignature epoch (restored from a backup) is not held, for the lookup (the state the
        // request is answered from) as for the secret's read (audit of issue 34 item 3, NIT-7: the two agree, so
        // such a row never reaches the consuming transaction and its audit line).
        #expect(try store.presignatureLookup(id: bytes32(2)) != .none)
        try rawExecute(location, sqlite: "UPDATE presignatures SET epoch = x'00'",
                       postgres: "UPDATE presignatures SET epoch = '\\x00'::bytea")
        #expect(try store.presignatureLookup(id: bytes32(2)) == .none)
        #expect(try store.heldPresignatureSecret(id: bytes32(2)) == nil, "another epoch")
    }
}
