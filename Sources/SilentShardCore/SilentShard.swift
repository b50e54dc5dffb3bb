/// The SDK's namespace: `SilentShard.ECDSA` (DKLs23 over secp256k1) and `SilentShard.EdDSA`
/// (FROST over Ed25519). Sessions and transports are added by the modules `duo` and `trio`.
public enum SilentShard {
    /// The SDK version.
    public static let version = "0.1.0"

    /// Threshold ECDSA over secp256k1 (DKLs23).
    public enum ECDSA {}

    /// Threshold EdDSA over Ed25519 (FROST, RFC 9591).
    public enum EdDSA {}
}
