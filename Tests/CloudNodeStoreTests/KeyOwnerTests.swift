import Foundation
import Testing
@testable import CloudNode
import SilentShardCore

/// Security review finding 11, last part: a key is never stored without an owner. A new key's commit
/// names its owner or is refused with nothing written; a key the node holds without an owner row (from
/// before owners were recorded, or written around the store) is `unowned`, which authorization refuses
/// to everyone — before, `owner == nil` read as "a key the node does not know" and let every principal in.
@Suite("Finding 11: a key is never stored without an owner")
struct KeyOwnerTests {
    @Test("a new key's commit without an owner is refused and writes nothing", arguments: StoreBackend.allCases)
    func newKeysNeedAnOwner(_ backend: StoreBackend) throws {
        let store = try NodeShareStore(location: try scratchLocation(backend), masterKey: .random())
        // Direct commit (duo keygen, import).
        #expect(nodeError { try store.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: nil, party: "app", owner: "") }
            == .ownerRequired(keyId: keyA))
        #expect(try store.share(keyId: keyA) == nil)
        #expect(try store.ownership(keyId: keyA) == .unknownKey)
        // Two-phase commit (trio keygen, a hard-derived child): the prepared share stays prepared.
        try store.prepare(keyId: keyB, share: keyshare(gen: 1, seed: 1, digest: 0xD1), party: "node 1")
        #expect(nodeError { try store.commit(keyId: keyB, gen: bytes32(1), digest: bytes32(0xD1), party: "app", owner: "") }
            == .ownerRequired(keyId: keyB))
        #expect(try store.share(keyId: keyB) == nil)
        #expect(try store.share(keyId: keyB, slot: .prepared) != nil)
        #expect(try store.decision(keyId: keyB, gen: bytes32(1)) == nil)
        // With an owner both commit, and the owner is recorded.
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: nil, party: "app", owner: "alice")
        try store.commit(keyId: keyB, gen: bytes32(1), digest: bytes32(0xD1), party: "app", owner: "bob")
        #expect(try store.ownership(keyId: keyA) == .owned(by: "alice"))
        #expect(try store.ownership(keyId: keyB) == .owned(by: "bob"))
        // An existing key keeps its owner; the commit's subject does not replace it.
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 2, seed: 2), replacing: bytes32(1), party: "app", owner: "mallory")
        #expect(try store.ownership(keyId: keyA) == .owned(by: "alice"))
    }

    @Test("a held key without an owner row is unowned, and nobody is authorized on it", arguments: StoreBackend.allCases)
    func heldKeysWithoutAnOwnerAreUnowned(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let store = try NodeShareStore(location: location, masterKey: .random())
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: nil, party: "app", owner: "alice")
        try rawExecute(location, sqlite: "DELETE FROM key_owners", postgres: "DELETE FROM key_owners")
        #expect(try store.ownership(keyId: keyA) == .unowned)
        for subject in ["alice", "mallory", NoTokenVerifier.subject] {
            #expect(throws: SetupRejection(.forbidden)) {
                try KeyAuthorization.checkOwner(.unowned, principal: Principal(subject: subject))
            }
        }
        #expect(throws: Never.self) { try KeyAuthorization.checkOwner(.unknownKey, principal: Principal(subject: "alice")) }
        #expect(throws: Never.self) { try KeyAuthorization.checkOwner(.owned(by: "alice"), principal: Principal(subject: "alice")) }
    }
}
