import MPCCrypto

/// One participant's per-session keys (`specs/session.md` §1.4): an Ed25519 pair signing the session's
/// frames (label `frame`) and an X25519 pair for the point-to-point keys. Drawn fresh per session,
/// erased with it (the value goes out of scope; Swift arrays cannot be reliably zeroed).
public struct SessionKeyPair: Sendable, SecretReflecting {
    /// Signs frames.
    public let signingKey: Ed25519.SigningKey
    /// Derives point-to-point keys.
    public let agreementKey: X25519.PrivateKey

    /// Fresh keys from the CSPRNG.
    public init() {
        signingKey = Ed25519.SigningKey()
        agreementKey = X25519.PrivateKey()
    }

    /// Keys from given values (tests and vectors).
    public init(signingKey: Ed25519.SigningKey, agreementKey: X25519.PrivateKey) {
        self.signingKey = signingKey
        self.agreementKey = agreementKey
    }

    /// The public half, as SETUP/ACCEPT carry it.
    public var publicKeys: SessionPublicKeys {
        SessionPublicKeys(signingKey: signingKey.verifyingKey, agreementKey: agreementKey.publicKey)
    }

    /// Signs `sigmsg("frame", header ‖ payload)`.
    func signFrame(_ headerAndPayload: [UInt8]) -> [UInt8] {
        signingKey.signature(for: SessionHash.signingInput(.frame, headerAndPayload))
    }
}

extension SessionKeyPair: CustomStringConvertible {
    public var description: String { "SessionKeyPair(\(Hex.encode(signingKey.verifyingKey.bytes)))" }
}

/// A participant's public session keys: `Ed25519 pk (32) ‖ X25519 pk (32)` on the wire.
public struct SessionPublicKeys: Sendable, Equatable {
    public static let byteCount = 64
    /// Verifies the participant's frames.
    public let signingKey: Ed25519.VerifyingKey
    /// The participant's X25519 public key.
    public let agreementKey: X25519.PublicKey

    public init(signingKey: Ed25519.VerifyingKey, agreementKey: X25519.PublicKey) {
        self.signingKey = signingKey
        self.agreementKey = agreementKey
    }

    /// Decodes the 64-byte field. The Ed25519 key must be a valid, non-small-order point; any X25519
    /// key decodes (a weak one fails at agreement with `BAD_AUTHENTICATOR`, §3.3).
    public init(bytes: [UInt8]) throws(SessionError) {
        guard bytes.count == Self.byteCount,
              let signing = try? Ed25519.VerifyingKey(bytes: bytes[0..<32]),
              let agreement = try? X25519.PublicKey(bytes: Array(bytes[32..<64]))
        else { throw .invalidParameter }
        signingKey = signing
        agreementKey = agreement
    }

    /// The 64-byte field.
    public var bytes: [UInt8] { signingKey.bytes + agreementKey.bytes }
}
