import Foundation
import MPCCrypto
import Testing
@testable import CloudNode
import SilentShardCore

/// Security review finding 1 at the store: a hard-derived child records its parent; the parent's next
/// generation retires the child (and its children) in the same transaction; a child of a replaced
/// generation never commits.
@Suite("NodeShareStore: hard-derived children retire with their parent's generation")
struct ChildRetirementTests {
    let child = String(repeating: "3c", count: 32)
    let grandchild = String(repeating: "4d", count: 32)
    let path = DerivationPathBytes(indices: [0x8000_002C, 0x8000_003C, 0]).encoded

    func commitChild(_ store: NodeShareStore, _ id: String, parent: String, parentGen: UInt8, gen: UInt8) throws {
        try store.prepare(keyId: id, share: keyshare(gen: gen, seed: gen, digest: gen), party: "node 1", rederivable: true)
        try store.commit(keyId: id, gen: bytes32(gen), digest: bytes32(gen), party: "app", owner: "alice",
                         parent: (keyId: parent, gen: bytes32(parentGen), path: path))
    }

    func presignature(_ id: UInt8, key: String, gen: UInt8) -> NodePresignature {
        NodePresignature(id: bytes32(id), keyId: key, gen: bytes32(gen), party: 1, deviceKey: device,
                         expiresAt: Date().addingTimeInterval(3600), secret: secretShare(id, count: 160))
    }

    @Test("a parent's new generation deletes its children's shares, presignatures and owners", arguments: StoreBackend.allCases)
    func parentRefreshRetiresChildren(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try commitChild(store, child, parent: keyA, parentGen: 1, gen: 0x21)
        try commitChild(store, grandchild, parent: child, parentGen: 0x21, gen: 0x31)
        try store.storePresignature(presignature(7, key: child, gen: 0x21))
        try store.storePresignature(presignature(8, key: grandchild, gen: 0x31))
        #expect(try store.owner(keyId: child) == "alice")

        // Re-deriving the same child generation changes nothing (idempotent commit).
        try store.commit(keyId: child, gen: bytes32(0x21), digest: bytes32(0x21), party: "app", owner: "alice",
                         parent: (keyId: keyA, gen: bytes32(1), path: path))
        #expect(try store.share(keyId: child)?.gen == bytes32(0x21))

        // The parent moves to gen 2: the child and grandchild are gone, the parent's new share is current.
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app", owner: "test-owner")
        for id in [child, grandchild] {
            #expect(try store.share(keyId: id) == nil)
            #expect(try store.presignatureCount(keyId: id) == 0)
            #expect(try store.owner(keyId: id) == nil)
        }
        #expect(try store.share(keyId: keyA)?.gen == bytes32(2))
        #expect(try store.auditLog(keyId: child).contains { $0.operation == "retire" })
        // Each leaves a tombstone: its parent and path (told to its owner with KEY_RETIRED), and it stays
        // its owner's, so nobody else learns that it existed.
        #expect(try store.retirement(keyId: child).map { [$0.parentKeyId] + [Hex.encode($0.path)] } == [keyA, Hex.encode(path)])
        #expect(try store.retirement(keyId: grandchild)?.parentKeyId == child)
        #expect(try store.ownership(keyId: child) == .owned(by: "alice"))

        // A child derived from the replaced generation never commits; one from the current one does.
        try store.prepare(keyId: child, share: keyshare(gen: 0x22, seed: 0x22, digest: 0x22), party: "node 1", rederivable: true)
        #expect(nodeError {
            try store.commit(keyId: child, gen: bytes32(0x22), digest: bytes32(0x22), party: "app", owner: "alice",
                             parent: (keyId: keyA, gen: bytes32(1), path: path))
        } == .staleGeneration(keyId: keyA))
        try store.commit(keyId: child, gen: bytes32(0x22), digest: bytes32(0x22), party: "app", owner: "alice",
                         parent: (keyId: keyA, gen: bytes32(2), path: path))
        #expect(try store.share(keyId: child)?.gen == bytes32(0x22))
        #expect(try store.retirement(keyId: child) == nil, "derived again: no longer retired")

        // A duo-style direct commit of a new parent generation retires it again; deleting the parent too.
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 3, seed: 3), replacing: bytes32(2), party: "app", owner: "test-owner")
        #expect(try store.share(keyId: child) == nil)
        try commitChild(store, child, parent: keyA, parentGen: 3, gen: 0x23)
        try store.deleteKey(keyId: keyA, party: "operator")
        #expect(try store.share(keyId: child) == nil)
        // A deleted parent leaves no tombstones: there is nothing to derive the child from again.
        for id in [child, grandchild] {
            #expect(try store.retirement(keyId: id) == nil)
            #expect(try store.ownership(keyId: id) == .unknownKey)
        }
    }
}
