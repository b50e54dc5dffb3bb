/// A P-256 key held by a Secure Enclave (Apple: CryptoKit's `SecureEnclave.P256.Signing.PrivateKey`;
/// tests: a software double). The private key never leaves the hardware; `dataRepresentation` is an
/// opaque blob only this device's Secure Enclave can use again.
protocol SecureEnclaveKeyHandle: Sendable {
    /// The blob that `SecureEnclaveKeyBackend.loadKey` turns back into this key (not the private key).
    var dataRepresentation: [UInt8] { get }
    /// The 65-byte uncompressed SEC1 public key.
    var publicKey: [UInt8] { get }
    /// ECDSA over SHA-256(message), raw r ‖ s (64 bytes).
    func sign(_ message: [UInt8]) throws(DeviceKeyError) -> [UInt8]
}

/// Creates and reloads Secure Enclave keys.
protocol SecureEnclaveKeyBackend: Sendable {
    /// A new key in the Secure Enclave, usable without user presence (the SDK signs SETUP frames in
    /// the background), on this device only.
    func createKey() throws(DeviceKeyError) -> any SecureEnclaveKeyHandle
    /// The key a `dataRepresentation` blob names.
    func loadKey(_ dataRepresentation: [UInt8]) throws(DeviceKeyError) -> any SecureEnclaveKeyHandle
}
