import Foundation

/// What kind of bytes a stored share holds, so the SDK knows which decoder to use.
public enum StoredShareKind: UInt8, Sendable, CaseIterable {
    /// A DKLs23 (ECDSA/secp256k1) keyshare: `DKLsKeyshare.serialized()`.
    case ecdsa = 1
    /// A FROST (EdDSA/Ed25519) keyshare.
    case eddsa = 2
    /// SDK-internal records under reserved key ids (presignature tombstones, bans).
    case sdkRecord = 0x7F
}

extension StoredShareKind {
    /// The kind of a keyshare of `algorithm`.
    package init(_ algorithm: Keyshare.Algorithm) {
        self = algorithm == .ecdsa ? .ecdsa : .eddsa
    }

    /// The algorithm of a keyshare of this kind (nil for SDK records).
    package var algorithm: Keyshare.Algorithm? {
        switch self {
        case .ecdsa: return .ecdsa
        case .eddsa: return .eddsa
        case .sdkRecord: return nil
        }
    }
}

/// One stored share: an opaque, versioned serialization plus its kind. The storage layer never parses
/// `bytes`; the keyshare codecs do (and version them).
public struct StoredShare: Sendable, Equatable, SecretRedacting {
    /// What the bytes encode (an ECDSA or EdDSA keyshare, or an SDK record).
    public var kind: StoredShareKind
    /// The serialization, secret: keep it only in the app's `StorageClient`.
    public var bytes: Data

    /// A stored share of `kind` holding `bytes`.
    public init(kind: StoredShareKind, bytes: Data) {
        self.kind = kind
        self.bytes = bytes
    }

    /// A stored share of `kind` holding `bytes`.
    public init(kind: StoredShareKind, bytes: [UInt8]) {
        self.init(kind: kind, bytes: Data(bytes))
    }

    public var description: String { "StoredShare(\(kind), \(bytes.count) bytes)" }
}

/// The app's record for one key id (session.md §7.1): `{current: g, staged: nil}` is settled;
/// a staged share is durably written before the app votes and promoted once every node confirmed.
/// Written atomically as one unit by every `StorageClient`.
public struct KeyshareRecord: Sendable, Equatable, SecretRedacting {
    /// The key id (hex) the record belongs to.
    public var keyId: String
    /// A share written during a share-changing step and not yet promoted; nil when settled.
    public var staged: StoredShare?
    /// The share in use; nil before the key's first generation is promoted.
    public var current: StoredShare?

    /// A record for `keyId` with the given shares.
    public init(keyId: String, staged: StoredShare? = nil, current: StoredShare? = nil) {
        self.keyId = keyId
        self.staged = staged
        self.current = current
    }

    public var description: String {
        "KeyshareRecord(\(keyId), staged: \(staged?.description ?? "nil"), current: \(current?.description ?? "nil"))"
    }
}

/// Values holding secrets: `description`, `debugDescription` and reflection (`dump`, debuggers) show
/// sizes only, never bytes.
public protocol SecretRedacting: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {}

extension SecretRedacting {
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
