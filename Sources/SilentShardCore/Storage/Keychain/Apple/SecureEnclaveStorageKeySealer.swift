#if canImport(CryptoKit) && canImport(Security)
import CryptoKit
import Foundation
import Security

/// `StorageKeySealer` over a Secure Enclave P-256 key-agreement key (Apple only, not compiled on Linux):
/// `sealed = ephemeral public key (65) ‖ ChaChaPoly(nonce 12 ‖ ciphertext 32 ‖ tag 16)` under
/// `HKDF-SHA-256(ECDH(ephemeral, enclave key), info: "SilentShard/storage-key-seal/v1" ‖ both public keys)`.
/// The enclave key is created on first seal (its blob is a Keychain item, added only if absent).
struct SecureEnclaveStorageKeySealer: StorageKeySealer {
    let items: any KeychainItemStore
    private static let sealedByteCount = 65 + 12 + 32 + 16

    func seal(_ key: [UInt8]) throws(StorageError) -> [UInt8] {
        let recipient = try enclaveKey(create: true).publicKey
        do {
            let ephemeral = CryptoKit.P256.KeyAgreement.PrivateKey()
            let secret = try ephemeral.sharedSecretFromKeyAgreement(with: recipient)
            let box = try ChaChaPoly.seal(Data(key), using: Self.wrappingKey(secret, ephemeral.publicKey, recipient))
            return [UInt8](ephemeral.publicKey.x963Representation) + [UInt8](box.combined)
        } catch {
            throw .keychain(operation: "seal the storage key with the Secure Enclave", status: errSecInternalError)
        }
    }

    func open(_ sealed: [UInt8]) throws(StorageError) -> [UInt8] {
        guard sealed.count == Self.sealedByteCount else { throw .keychain(operation: "open the sealed storage key", status: errSecDecode) }
        let enclave = try enclaveKey(create: false)
        do {
            let ephemeral = try CryptoKit.P256.KeyAgreement.PublicKey(x963Representation: Data(sealed[0..<65]))
            let secret = try enclave.sharedSecretFromKeyAgreement(with: ephemeral)
            let box = try ChaChaPoly.SealedBox(combined: Data(sealed[65...]))
            return [UInt8](try ChaChaPoly.open(box, using: Self.wrappingKey(secret, ephemeral, enclave.publicKey)))
        } catch {
            throw .keychain(operation: "open the sealed storage key", status: errSecDecode)
        }
    }

    private static func wrappingKey(_ secret: SharedSecret, _ ephemeral: CryptoKit.P256.KeyAgreement.PublicKey,
                                    _ recipient: CryptoKit.P256.KeyAgreement.PublicKey) -> SymmetricKey {
        secret.hkdfDerivedSymmetricKey(
            using: CryptoKit.SHA256.self, salt: Data(),
            sharedInfo: Data("SilentShard/storage-key-seal/v1".utf8) + ephemeral.x963Representation + recipient.x963Representation,
            outputByteCount: 32)
    }

    private func enclaveKey(create: Bool) throws(StorageError) -> SecureEnclave.P256.KeyAgreement.PrivateKey {
        let account = KeychainAccount.storageKeySealingKey
        if let blob = try items.data(account: account) { return try Self.load(blob) }
        guard create else { throw .keychain(operation: "load the Secure Enclave sealing key", status: errSecItemNotFound) }
        guard SecureEnclave.isAvailable,
              let access = SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, nil),
              let fresh = try? SecureEnclave.P256.KeyAgreement.PrivateKey(accessControl: access)
        else { throw .keychain(operation: "create the Secure Enclave sealing key", status: errSecNotAvailable) }
        if try items.add([UInt8](fresh.dataRepresentation), account: account) { return fresh }
        guard let blob = try items.data(account: account) else {
            throw .keychain(operation: "load the Secure Enclave sealing key", status: errSecItemNotFound)
        }
        return try Self.load(blob)
    }

    private static func load(_ blob: [UInt8]) throws(StorageError) -> SecureEnclave.P256.KeyAgreement.PrivateKey {
        do {
            return try SecureEnclave.P256.KeyAgreement.PrivateKey(dataRepresentation: Data(blob))
        } catch {
            throw .keychain(operation: "load the Secure Enclave sealing key", status: errSecDecode)
        }
    }
}
#endif
