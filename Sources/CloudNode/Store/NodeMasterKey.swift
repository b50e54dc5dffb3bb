import MPCCrypto
import SilentShardCore

/// The node's 32-byte master key: every keyshare and presignature secret is sealed under it with
/// XChaCha20-Poly1305 before it reaches the database. Load it from a KMS, HSM or secret manager;
/// never from the database's own disk. Its description never shows the key.
package struct NodeMasterKey: Sendable, SecretRedacting {
    let bytes: [UInt8]

    /// Wraps 32 key bytes.
    package init(bytes: [UInt8]) throws(NodeStoreError) {
        guard bytes.count == XChaCha20Poly1305.keyByteCount else {
            throw .invalidArgument("master key must be 32 bytes")
        }
        self.bytes = bytes
    }

    /// A fresh random key (tests, first start of a development node).
    package static func random() -> NodeMasterKey {
        NodeMasterKey(unchecked: SecureRandom.bytes(count: XChaCha20Poly1305.keyByteCount))
    }

    private init(unchecked bytes: [UInt8]) { self.bytes = bytes }

    package var description: String { "NodeMasterKey(redacted)" }
}
