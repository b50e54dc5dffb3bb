import Foundation
import MPCCrypto
@testable import SilentShardCore

/// The Linux double of the Keychain: items in memory, each call atomic. `beforeAdd` runs once inside
/// the next `add`, before its existence check (to let another creator win a race).
final class InMemoryKeychainItemStore: KeychainItemStore, @unchecked Sendable {
    private let items: LockedValue<[String: [UInt8]]>
    let beforeAdd = LockedValue<(@Sendable (InMemoryKeychainItemStore) -> Void)?>(nil)

    init(_ items: [String: [UInt8]] = [:]) { self.items = LockedValue(items) }

    /// An independent copy of every item (another device's restore, or a tampered Keychain).
    func copy() -> InMemoryKeychainItemStore { InMemoryKeychainItemStore(items.withLock { $0 }) }

    func data(account: String) throws(StorageError) -> [UInt8]? { items.withLock { $0[account] } }

    func add(_ data: [UInt8], account: String) throws(StorageError) -> Bool {
        if let hook = beforeAdd.withLock({ hook in defer { hook = nil }; return hook }) { hook(self) }
        return items.withLock { items in
            guard items[account] == nil else { return false }
            items[account] = data
            return true
        }
    }

    func set(_ data: [UInt8], account: String) throws(StorageError) {
        items.withLock { $0[account] = data }
    }

    func delete(account: String) throws(StorageError) { _ = items.withLock { $0.removeValue(forKey: account) } }

    /// Overwrites an item with no checks (for tampering in tests).
    func force(_ data: [UInt8]?, account: String) { items.withLock { $0[account] = data } }
}

/// Items whose `set` fails without changing anything (a crash before the Keychain committed).
struct FailingSetItems: KeychainItemStore {
    let inner: InMemoryKeychainItemStore
    func data(account: String) throws(StorageError) -> [UInt8]? { try inner.data(account: account) }
    func add(_ data: [UInt8], account: String) throws(StorageError) -> Bool { try inner.add(data, account: account) }
    func set(_ data: [UInt8], account: String) throws(StorageError) {
        throw .keychain(operation: "SecItemUpdate (injected crash)", status: -25293)
    }
    func delete(account: String) throws(StorageError) { try inner.delete(account: account) }
}

/// The Linux double of the Secure Enclave: software P-256 keys whose "blob" is a tag and the scalar
/// (test only: a real blob never contains the private key).
struct SoftwareSecureEnclaveBackend: SecureEnclaveKeyBackend {
    static let tag: [UInt8] = Array("SWSE".utf8)

    func createKey() throws(DeviceKeyError) -> any SecureEnclaveKeyHandle { SoftwareSecureEnclaveKey(key: P256.SigningKey()) }

    func loadKey(_ blob: [UInt8]) throws(DeviceKeyError) -> any SecureEnclaveKeyHandle {
        guard blob.count == 36, Array(blob.prefix(4)) == Self.tag,
              let key = try? P256.SigningKey(rawRepresentation: Array(blob.dropFirst(4)))
        else { throw .unavailable(reason: "the Secure Enclave did not load the key") }
        return SoftwareSecureEnclaveKey(key: key)
    }
}

struct SoftwareSecureEnclaveKey: SecureEnclaveKeyHandle {
    let key: P256.SigningKey
    /// Replaces each signature's last byte (a faulty backend).
    var corruptSignatures = false
    /// Reports this public key instead of the real one.
    var publicKeyOverride: [UInt8]?

    var dataRepresentation: [UInt8] { SoftwareSecureEnclaveBackend.tag + key.rawRepresentation }
    var publicKey: [UInt8] { publicKeyOverride ?? key.verifyingKey.x963Representation }

    func sign(_ message: [UInt8]) throws(DeviceKeyError) -> [UInt8] {
        guard var signature = try? key.signature(for: message).rawRepresentation else {
            throw .unavailable(reason: "the Secure Enclave did not sign")
        }
        if corruptSignatures { signature[63] ^= 0x01 }
        return signature
    }
}

/// A backend whose keys are faulty in one way.
struct FaultySecureEnclaveBackend: SecureEnclaveKeyBackend {
    var corruptSignatures = false
    var publicKeyOverride: [UInt8]?

    func createKey() throws(DeviceKeyError) -> any SecureEnclaveKeyHandle {
        SoftwareSecureEnclaveKey(key: P256.SigningKey(), corruptSignatures: corruptSignatures, publicKeyOverride: publicKeyOverride)
    }

    func loadKey(_ blob: [UInt8]) throws(DeviceKeyError) -> any SecureEnclaveKeyHandle {
        throw .unavailable(reason: "the Secure Enclave did not load the key")
    }
}

/// The double of the Secure Enclave sealer: XChaCha20-Poly1305 under a software key ("another
/// device's enclave" is another instance).
struct SoftwareStorageKeySealer: StorageKeySealer {
    let key = SecureRandom.bytes(count: 32)

    func seal(_ plain: [UInt8]) throws(StorageError) -> [UInt8] {
        let nonce = SecureRandom.bytes(count: 24)
        guard let sealed = try? XChaCha20Poly1305.seal(plain, key: key, nonce: nonce) else { throw .invalidStorageKey }
        return nonce + sealed
    }

    func open(_ sealed: [UInt8]) throws(StorageError) -> [UInt8] {
        guard sealed.count > 24, let plain = try? XChaCha20Poly1305.open(Array(sealed.dropFirst(24)), key: key,
                                                                           nonce: Array(sealed.prefix(24)))
        else { throw .keychain(operation: "open the sealed storage key", status: -26275) }
        return plain
    }
}

/// A storage key the test holds.
struct FixedKeyProvider: StorageKeyProvider {
    let key: StorageKey
    func storageKey() async throws -> StorageKey { key }
}

/// A store whose writes fail without writing (a crash before the wrapped store committed).
struct CrashingWrites: StorageClient {
    let inner: any StorageClient
    func read(keyId: String) async throws -> KeyshareRecord? { try await inner.read(keyId: keyId) }
    func write(_ record: KeyshareRecord) async throws { throw StorageError.io(operation: "injected crash", errno: 5) }
    func delete(keyId: String) async throws { try await inner.delete(keyId: keyId) }
}
