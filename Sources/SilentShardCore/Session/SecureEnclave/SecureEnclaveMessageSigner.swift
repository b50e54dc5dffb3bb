import Foundation
import MPCCrypto

/// The app's device key (`docs/protocol/session.md` §1.2) as a P-256 key in the Secure Enclave: the
/// private key never leaves the hardware; signatures are raw r ‖ s of ECDSA-SHA-256, and each one is
/// verified against the public key before it is returned (a faulty backend is `invalidSignature`).
///
/// Get one with `loadOrCreate(service:name:accessGroup:)` (Apple platforms): the first call creates the
/// key and keeps its Secure Enclave blob in the Keychain (this device only); later calls load the same
/// key, so `verifyingKey` — the key the node registers — stays the same across launches.
public struct SecureEnclaveMessageSigner: MessageSigner, CustomStringConvertible, SecretReflecting {
    private let key: any SecureEnclaveKeyHandle
    private let verifier: P256.VerifyingKey
    /// The 65-byte uncompressed SEC1 public key.
    public let verifyingKey: Data

    /// Always `.p256`.
    public var keyType: MessageSignerKeyType { .p256 }

    /// Wraps a hardware key after checking its public key.
    init(key: any SecureEnclaveKeyHandle) throws(DeviceKeyError) {
        let publicKey = key.publicKey
        guard publicKey.count == 65, publicKey.first == 0x04,
              let verifier = try? P256.VerifyingKey(x963Representation: publicKey)
        else { throw .invalidPublicKey }
        self.key = key
        self.verifier = verifier
        verifyingKey = Data(publicKey)
    }

    /// Signs `message` (ECDSA-SHA-256, raw r ‖ s, 64 bytes) in the Secure Enclave.
    public func sign(_ message: Data) async throws -> Data {
        let bytes = Array(message)
        let signature = try key.sign(bytes)
        guard let parsed = try? P256.Signature(rawRepresentation: signature),
              verifier.isValidSignature(parsed, for: bytes)
        else { throw DeviceKeyError.invalidSignature }
        return Data(signature)
    }

    /// Shows the public key only.
    public var description: String { "SecureEnclaveMessageSigner(\(Hex.encode(verifyingKey)))" }

    /// The key named `name`: loaded from its blob in `items`, or created by `backend` and its blob added
    /// (never overwriting: if another caller added one first, that key is loaded). A blob that no longer
    /// loads is an error, not a reason to make a new key (the node has the old one registered).
    static func loadOrCreate(name: String, items: any KeychainItemStore,
                             backend: any SecureEnclaveKeyBackend) throws(DeviceKeyError) -> SecureEnclaveMessageSigner {
        let account = KeychainAccount.deviceKey(name)
        if let blob = try keychain({ () throws(StorageError) in try items.data(account: account) }) {
            return try SecureEnclaveMessageSigner(key: backend.loadKey(blob))
        }
        let fresh = try backend.createKey()
        let signer = try SecureEnclaveMessageSigner(key: fresh)
        if try keychain({ () throws(StorageError) in try items.add(fresh.dataRepresentation, account: account) }) {
            return signer
        }
        guard let blob = try keychain({ () throws(StorageError) in try items.data(account: account) }) else {
            throw .unavailable(reason: "device key blob vanished after a concurrent add")
        }
        return try SecureEnclaveMessageSigner(key: backend.loadKey(blob))
    }

    private static func keychain<T>(_ body: () throws(StorageError) -> T) throws(DeviceKeyError) -> T {
        do {
            return try body()
        } catch {
            if case .keychain(let operation, let status) = error { throw .keychain(operation: operation, status: status) }
            throw .unavailable(reason: "device key storage failed")
        }
    }
}
