import Foundation
import Testing
@testable import CloudNode
import SilentShardCore

@Suite("NodeShareStore: master-key rotation")
struct RotationTests {
    let oldKey: NodeMasterKey
    let newKey: NodeMasterKey

    init() throws {
        oldKey = try NodeMasterKey(bytes: bytes32(0x01))
        newKey = try NodeMasterKey(bytes: bytes32(0x02))
    }

    func populated(_ location: NodeStoreLocation) throws {
        let store = try storeWithCommittedKey(location, masterKey: oldKey)  // CURRENT gen 1
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.storePresignature(NodePresignature(id: bytes32(9), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                                                     expiresAt: Date().addingTimeInterval(3600), secret: secretShare(9, count: 160)))
    }

    @Test("every sealed row moves to the new key; the old key no longer opens the database", arguments: StoreBackend.allCases)
    func rotation(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        try populated(location)
        let report = try NodeShareStore.rotateMasterKey(location: location, from: oldKey, to: newKey)
        #expect(report == .init(keyshares: 2, presignatures: 1))
        #expect(nodeError { try NodeShareStore(location: location, masterKey: oldKey) } == .wrongMasterKey)
        let store = try NodeShareStore(location: location, masterKey: newKey)
        #expect(try store.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
        #expect(try store.share(keyId: keyA, slot: .prepared) == keyshare(gen: 2, seed: 2, digest: 0xD2))
        let consumed = try store.consumePresignature(id: bytes32(9), requestHash: bytes32(1)) { secret, _ in
            #expect(secret == secretShare(9, count: 160))
            return [1]
        }
        #expect(consumed == .finished(response: [1]))
        // The raw file holds no plaintext share.
        guard case .sqlite(let path) = location else { return }
        #expect(!rawDatabaseBytes(path).contains(run: Array(secretShare(1).prefix(16))))
    }

    @Test("a wrong current key or an unreadable row changes nothing", arguments: StoreBackend.allCases)
    func failedRotationChangesNothing(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        try populated(location)
        #expect(nodeError { try NodeShareStore.rotateMasterKey(location: location, from: newKey, to: oldKey) } == .wrongMasterKey)
        #expect(nodeError { try NodeShareStore.rotateMasterKey(location: location, from: oldKey, to: oldKey) } != nil)
        // Corrupt one sealed row: the rotation refuses as a whole.
        try rawExecute(location, sqlite: "UPDATE keyshares SET sealed = zeroblob(80) WHERE slot = 2",
                       postgres: "UPDATE keyshares SET sealed = decode(repeat('00', 80), 'hex') WHERE slot = 2")
        #expect(nodeError { try NodeShareStore.rotateMasterKey(location: location, from: oldKey, to: newKey) } == .integrityFailure(keyId: keyA))
        let store = try NodeShareStore(location: location, masterKey: oldKey)
        #expect(try store.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
    }
}
