#if canImport(CryptoKit) && canImport(Security)
import CryptoKit
import Foundation
import Security

/// `SecureEnclaveKeyBackend` over CryptoKit (Apple only, not compiled on Linux).
struct CryptoKitSecureEnclaveBackend: SecureEnclaveKeyBackend {
    func createKey() throws(DeviceKeyError) -> any SecureEnclaveKeyHandle {
        guard SecureEnclave.isAvailable else { throw .unavailable(reason: "this device has no Secure Enclave") }
        guard let access = SecAccessControlCreateWithFlags(
            nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .privateKeyUsage, nil)
        else { throw .unavailable(reason: "access control could not be created") }
        do {
            return CryptoKitSecureEnclaveKey(key: try SecureEnclave.P256.Signing.PrivateKey(accessControl: access))
        } catch {
            throw .unavailable(reason: "the Secure Enclave did not create a key")
        }
    }

    func loadKey(_ dataRepresentation: [UInt8]) throws(DeviceKeyError) -> any SecureEnclaveKeyHandle {
        do {
            return CryptoKitSecureEnclaveKey(key: try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: Data(dataRepresentation)))
        } catch {
            throw .unavailable(reason: "the Secure Enclave did not load the key")
        }
    }
}

/// A CryptoKit Secure Enclave key. `@unchecked Sendable`: the wrapped key is an immutable handle.
struct CryptoKitSecureEnclaveKey: SecureEnclaveKeyHandle, @unchecked Sendable {
    let key: SecureEnclave.P256.Signing.PrivateKey

    var dataRepresentation: [UInt8] { [UInt8](key.dataRepresentation) }
    var publicKey: [UInt8] { [UInt8](key.publicKey.x963Representation) }

    func sign(_ message: [UInt8]) throws(DeviceKeyError) -> [UInt8] {
        do {
            return [UInt8](try key.signature(for: Data(message)).rawRepresentation)
        } catch {
            throw .unavailable(reason: "the Secure Enclave did not sign")
        }
    }
}

extension SecureEnclaveMessageSigner {
    /// Whether this device has a Secure Enclave (false in the iOS Simulator on older Macs).
    public static var isAvailable: Bool { SecureEnclave.isAvailable }

    /// The device key named `name`, created in the Secure Enclave on first use; its blob is kept in the
    /// Keychain under `service` (and `accessGroup`), after first unlock, this device only.
    public static func loadOrCreate(service: String, name: String = "default",
                                    accessGroup: String? = nil) throws(DeviceKeyError) -> SecureEnclaveMessageSigner {
        try loadOrCreate(name: name,
                         items: SecurityKeychainItemStore(service: service, accessGroup: accessGroup,
                                                          accessibility: .afterFirstUnlockThisDeviceOnly),
                         backend: CryptoKitSecureEnclaveBackend())
    }
}
#endif
