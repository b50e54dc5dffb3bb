import Foundation
import MPCCrypto
import Testing
@testable import SilentShardCore

@Suite("SecureEnclaveMessageSigner over the Secure Enclave double")
struct SecureEnclaveMessageSignerTests {
    private func verify(_ signer: SecureEnclaveMessageSigner, _ message: [UInt8]) async throws -> Bool {
        let signature = try await signer.sign(Data(message))
        #expect(signature.count == 64)
        let key = try P256.VerifyingKey(x963Representation: Array(signer.verifyingKey))
        return key.isValidSignature(try P256.Signature(rawRepresentation: Array(signature)), for: message)
    }

    @Test("created once, then loaded: the same P-256 key signs raw r ‖ s that verify")
    func loadOrCreate() async throws {
        let items = InMemoryKeychainItemStore()
        let backend = SoftwareSecureEnclaveBackend()
        let created = try SecureEnclaveMessageSigner.loadOrCreate(name: "default", items: items, backend: backend)
        let loaded = try SecureEnclaveMessageSigner.loadOrCreate(name: "default", items: items, backend: backend)
        let other = try SecureEnclaveMessageSigner.loadOrCreate(name: "second", items: items, backend: backend)
        #expect(created.keyType == .p256 && created.verifyingKey.count == 65 && created.verifyingKey.first == 0x04)
        #expect(loaded.verifyingKey == created.verifyingKey)
        #expect(other.verifyingKey != created.verifyingKey)
        #expect(try await verify(created, Array("setup frame".utf8)))
        #expect(try await verify(loaded, []))
        // The SDK's own check of a device key (session.md §1.2) accepts its signatures.
        let deviceKey = try DeviceKey(signer: loaded)
        let message = Array("sigmsg".utf8)
        #expect(deviceKey.isValidSignature(Array(try await loaded.sign(Data(message))), for: message))
        #expect(!created.description.contains(Hex.encode(SoftwareSecureEnclaveBackend.tag)))
    }

    @Test("losing the race to create the key loads the winner's key")
    func creationRace() async throws {
        let items = InMemoryKeychainItemStore()
        let backend = SoftwareSecureEnclaveBackend()
        let winner = try backend.createKey()
        items.beforeAdd.withLock { $0 = { store in store.force(winner.dataRepresentation, account: KeychainAccount.deviceKey("default")) } }
        let signer = try SecureEnclaveMessageSigner.loadOrCreate(name: "default", items: items, backend: backend)
        #expect(Array(signer.verifyingKey) == winner.publicKey)
        #expect(try await verify(signer, [1, 2, 3]))
    }

    @Test("a blob that no longer loads is an error and is kept (the node knows that key)")
    func unloadableBlob() throws {
        let items = InMemoryKeychainItemStore()
        let account = KeychainAccount.deviceKey("default")
        items.force([0xDE, 0xAD], account: account)
        #expect(throws: DeviceKeyError.unavailable(reason: "the Secure Enclave did not load the key")) {
            _ = try SecureEnclaveMessageSigner.loadOrCreate(name: "default", items: items, backend: SoftwareSecureEnclaveBackend())
        }
        #expect(try items.data(account: account) == [0xDE, 0xAD])
    }

    @Test("a backend whose signatures do not verify, or whose public key is bad, is a typed error")
    func faultyBackend() async throws {
        let corrupt = try SecureEnclaveMessageSigner.loadOrCreate(
            name: "default", items: InMemoryKeychainItemStore(), backend: FaultySecureEnclaveBackend(corruptSignatures: true))
        await #expect(throws: DeviceKeyError.invalidSignature) { _ = try await corrupt.sign(Data([1, 2, 3])) }

        let valid = P256.SigningKey().verifyingKey
        let bads: [[UInt8]] = [
            [],                                          // empty
            [0x04] + [UInt8](repeating: 1, count: 64),   // not on the curve
            Array(valid.x963Representation.dropLast()), // 64 bytes
            valid.compressedRepresentation,              // compressed, not the registered form
        ]
        for bad in bads {
            let items = InMemoryKeychainItemStore()
            #expect(throws: DeviceKeyError.invalidPublicKey) {
                _ = try SecureEnclaveMessageSigner.loadOrCreate(name: "default", items: items,
                                                                backend: FaultySecureEnclaveBackend(publicKeyOverride: bad))
            }
            #expect(try items.data(account: KeychainAccount.deviceKey("default")) == nil)
        }
    }
}
