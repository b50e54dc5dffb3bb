/// Values that hold secrets reflect no children, so `dump`, debugger summaries and loggers that walk
/// a value's fields show only the type name. (`description` is handled separately by each type.)
public protocol SecretReflecting: CustomReflectable {}

extension SecretReflecting {
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

extension Secp256k1.Scalar: SecretReflecting {}
extension Ed25519.Scalar: SecretReflecting {}
extension Ed25519.SigningKey: SecretReflecting {}
extension X25519.PrivateKey: SecretReflecting {}
extension P256.SigningKey: SecretReflecting {}
