/// Failures of the SDK's hardware device-key signer (`SecureEnclaveMessageSigner`). No case carries key
/// material.
public enum DeviceKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The Secure Enclave is missing, or refused to create, load or use the key (`reason` says which).
    case unavailable(reason: String)
    /// The key's public key is not a 65-byte uncompressed P-256 point on the curve.
    case invalidPublicKey
    /// The hardware returned a signature that does not verify under the key's public key.
    case invalidSignature
    /// A Keychain call failed while loading or saving the key's blob (call name and `OSStatus`).
    case keychain(operation: String, status: Int32)

    public var description: String {
        switch self {
        case .unavailable(let reason): "device key unavailable: \(reason)"
        case .invalidPublicKey: "device key has an invalid P-256 public key"
        case .invalidSignature: "device key produced a signature that does not verify"
        case .keychain(let operation, let status): "\(operation) failed (OSStatus \(status))"
        }
    }
}
