import Foundation
import MPCCrypto

/// The app's long-term device key (`docs/protocol/session.md` §1.2): it signs SETUP frames (label `setup`)
/// and nothing else. Apps may implement it over a Secure Enclave or HSM key; the SDK ships software
/// signers (`SoftwareEd25519MessageSigner`, `SoftwareP256MessageSigner`).
public protocol MessageSigner: Sendable {
    /// The key type.
    var keyType: MessageSignerKeyType { get }
    /// The public key: Ed25519 32 bytes; P-256 65 bytes SEC1 uncompressed.
    var verifyingKey: Data { get }
    /// Signs `message` (the SDK passes the full `sigmsg` bytes): Ed25519 64-byte signature, P-256 raw
    /// r ‖ s (64 bytes) of ECDSA-SHA-256.
    func sign(_ message: Data) async throws -> Data
}

/// The key types a `MessageSigner` may have, with their wire codes (session.md §1.2).
public enum MessageSignerKeyType: UInt8, Sendable, CaseIterable {
    /// Ed25519 (RFC 8032): 32-byte public key, 64-byte signature.
    case ed25519 = 0x01
    /// ECDSA P-256 with SHA-256: 65-byte uncompressed public key, raw r ‖ s (64-byte) signature.
    case p256 = 0x02

    /// Public-key length on the wire.
    public var publicKeyByteCount: Int {
        switch self {
        case .ed25519: return 32
        case .p256: return 65
        }
    }
}

/// A software Ed25519 device key.
public struct SoftwareEd25519MessageSigner: MessageSigner, SecretReflecting {
    private let key: Ed25519.SigningKey

    /// Wraps an existing key.
    public init(signingKey: Ed25519.SigningKey) { key = signingKey }
    /// A fresh random key.
    public init() { key = Ed25519.SigningKey() }

    public var keyType: MessageSignerKeyType { .ed25519 }
    public var verifyingKey: Data { Data(key.verifyingKey.bytes) }
    public func sign(_ message: Data) async throws -> Data { Data(key.signature(for: Array(message))) }
}

/// A software P-256 device key.
public struct SoftwareP256MessageSigner: MessageSigner, SecretReflecting {
    private let key: P256.SigningKey

    /// Wraps an existing key.
    public init(signingKey: P256.SigningKey) { key = signingKey }
    /// A fresh random key.
    public init() { key = P256.SigningKey() }

    public var keyType: MessageSignerKeyType { .p256 }
    public var verifyingKey: Data { Data(key.verifyingKey.x963Representation) }
    public func sign(_ message: Data) async throws -> Data {
        Data(try key.signature(for: Array(message)).rawRepresentation)
    }
}

extension SoftwareEd25519MessageSigner: CustomStringConvertible {
    public var description: String { "SoftwareEd25519MessageSigner(\(Hex.encode(key.verifyingKey.bytes)))" }
}

extension SoftwareP256MessageSigner: CustomStringConvertible {
    public var description: String { "SoftwareP256MessageSigner(\(Hex.encode(key.verifyingKey.x963Representation)))" }
}

/// A device key's public identity, `type ‖ key bytes` (session.md §1.2), able to verify SETUP signatures.
package struct DeviceKey: Sendable, Equatable {
    /// The key type.
    package let type: MessageSignerKeyType
    /// The public key bytes (Ed25519 32, P-256 65 uncompressed).
    package let publicKey: [UInt8]

    private enum Verifier: Sendable {
        case ed25519(Ed25519.VerifyingKey)
        case p256(P256.VerifyingKey)
    }
    private let verifier: Verifier

    /// A key from its type and bytes. Ed25519 keys must be canonical points outside the small-order
    /// subgroup; P-256 keys must be 65-byte uncompressed SEC1 on the curve.
    package init(type: MessageSignerKeyType, publicKey: [UInt8]) throws(CryptoError) {
        guard publicKey.count == type.publicKeyByteCount else {
            throw .invalidLength(expected: type.publicKeyByteCount, actual: publicKey.count)
        }
        switch type {
        case .ed25519: verifier = .ed25519(try Ed25519.VerifyingKey(bytes: publicKey))
        case .p256:
            guard publicKey.first == 0x04 else { throw .invalidKey }
            verifier = .p256(try P256.VerifyingKey(x963Representation: publicKey))
        }
        self.type = type
        self.publicKey = publicKey
    }

    /// Decodes the identity `type ‖ key` (33 or 66 bytes).
    package init(identity: [UInt8]) throws(CryptoError) {
        guard let code = identity.first, let type = MessageSignerKeyType(rawValue: code) else { throw .invalidKey }
        try self.init(type: type, publicKey: Array(identity.dropFirst()))
    }

    /// The key of a `MessageSigner`.
    package init(signer: any MessageSigner) throws(CryptoError) {
        try self.init(type: signer.keyType, publicKey: Array(signer.verifyingKey))
    }

    /// `type ‖ key bytes`.
    package var identity: [UInt8] { [type.rawValue] + publicKey }

    /// Verifies a signature over `message` (strict Ed25519; P-256 raw r ‖ s with r, s in [1, n−1]).
    package func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        switch verifier {
        case .ed25519(let key):
            return key.isValidSignature(signature, for: message)
        case .p256(let key):
            guard let parsed = try? P256.Signature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(parsed, for: message)
        }
    }

    package static func == (lhs: DeviceKey, rhs: DeviceKey) -> Bool {
        lhs.type == rhs.type && lhs.publicKey == rhs.publicKey
    }
}

extension MessageSigner {
    /// Signs `sigmsg(label, message)` and checks the signer's output has the right length.
    func sign(label: SigningLabel, _ message: [UInt8]) async throws -> [UInt8] {
        let signature = try await sign(Data(SessionHash.signingInput(label, message)))
        guard signature.count == 64 else { throw SessionError.detected(.internalError, blamed: nil) }
        return Array(signature)
    }
}

/// `cloudVerifyingKey` parsing (session.md §1.2): exactly 64 hex characters of a valid Ed25519 public key.
package enum CloudVerifyingKey {
    /// The key, or `invalidConfiguration(.cloudVerifyingKey)`.
    package static func parse(_ text: String) throws(SessionError) -> Ed25519.VerifyingKey {
        guard text.utf8.count == 64, let bytes = try? Hex.decode(text),
              let key = try? Ed25519.VerifyingKey(bytes: bytes)
        else { throw .invalidConfiguration(.cloudVerifyingKey) }
        return key
    }
}
