import duo
import Foundation

/// The two things an app keeps on the device: where its key shares live and the device key the node registers.
public struct WalletDevice: Sendable {
    /// Where the app's shares (and presignatures) are kept.
    public let storage: any StorageClient
    /// The device key that signs every SETUP (the node binds the key to it at keygen).
    public let signer: any MessageSigner

    public init(storage: any StorageClient, signer: any MessageSigner) {
        self.storage = storage
        self.signer = signer
    }

    #if canImport(Security) && canImport(CryptoKit)
    /// The defaults for an iOS app: shares in the Keychain (this device only) sealed under a key that the Secure
    /// Enclave wraps where it exists, and a device key that never leaves the Secure Enclave.
    public static func appleDefault(service: String) throws -> WalletDevice {
        WalletDevice(storage: KeychainStorageClient(service: service, sealKeyInSecureEnclave: SecureEnclaveMessageSigner.isAvailable),
                     signer: try SecureEnclaveMessageSigner.loadOrCreate(service: service))
    }
    #endif
}
