import Foundation
import SilentShardCore

/// The two share slots per key id (session.md §7.1): at most one CURRENT and one PREPARED (staged).
package enum NodeShareSlot: UInt8, Sendable {
    case current = 1
    case prepared = 2
}

/// A node keyshare as the protocol layer hands it over: generation id, kind, opaque serialized share,
/// and the commit digest D it was prepared under (nil for a duo direct commit).
package struct NodeKeyshare: Sendable, Equatable, SecretRedacting {
    /// 32-byte generation id (session.md §1.5).
    package var gen: [UInt8]
    package var kind: StoredShareKind
    /// The serialized share (`DKLsKeyshare.serialized()` or FROST's).
    package var bytes: [UInt8]
    /// 32-byte commit digest D, when known.
    package var digest: [UInt8]?

    /// The record of `keyshare`, a node's new share bound to the device `deviceIdentity` (the
    /// `NodeShareBlob`), with its commit digest.
    package init(keyshare: Keyshare, deviceIdentity: [UInt8], digest: [UInt8]) {
        self.init(gen: [UInt8](keyshare.generation), kind: StoredShareKind(keyshare.algorithm),
                  bytes: NodeShareBlob(deviceIdentity: deviceIdentity, protocolBytes: keyshare.protocolKeyshareBytes).encoded,
                  digest: digest)
    }

    package init(gen: [UInt8], kind: StoredShareKind, bytes: [UInt8], digest: [UInt8]? = nil) {
        self.gen = gen
        self.kind = kind
        self.bytes = bytes
        self.digest = digest
    }

    package var description: String { "NodeKeyshare(\(kind), \(bytes.count) bytes)" }
}

/// What the node holds for a key id, without decrypting anything (reconcile's `key_status`).
package struct NodeKeyStatus: Sendable, Equatable {
    package var currentGen: [UInt8]?
    package var preparedGen: [UInt8]?
    package var preparedDigest: [UInt8]?
}

/// A decision log entry (session.md §7.1): retained so late COMMITs and rollbacks get a consistent answer.
package enum CommitDecision: Int64, Sendable {
    case committed = 1
    case aborted = 2
}

/// A presignature half to store (session.md §8.2).
package struct NodePresignature: Sendable, SecretRedacting {
    /// 32-byte presignature id (the preSign session's instance id).
    package var id: [UInt8]
    package var keyId: String
    package var gen: [UInt8]
    /// The node's party index X (1 or 2).
    package var party: UInt8
    /// The app device key the presignature is shared with (public; used by bans).
    package var deviceKey: [UInt8]
    package var expiresAt: Date
    /// The secret half and `kf` pair, serialized by the protocol layer.
    package var secret: [UInt8]

    package init(id: [UInt8], keyId: String, gen: [UInt8], party: UInt8, deviceKey: [UInt8], expiresAt: Date, secret: [UInt8]) {
        self.id = id
        self.keyId = keyId
        self.gen = gen
        self.party = party
        self.deviceKey = deviceKey
        self.expiresAt = expiresAt
        self.secret = secret
    }

    package var description: String { "NodePresignature(key \(keyId), party \(party), \(secret.count) secret bytes)" }
}

/// How a FINAL_REQUEST was answered.
package enum PresignatureFinish: Sendable, Equatable {
    /// This request consumed the presignature; `response` was stored as its finish record.
    case finished(response: [UInt8])
    /// The same request was seen before: its stored response, nothing consumed.
    case replayed(response: [UInt8])
}

/// A ban on an app device key (session.md §9.4).
package struct DeviceBan: Sendable, Equatable {
    package var deviceKey: [UInt8]
    /// Which check failed (no secrets; e.g. "dkls23 round 3 consistency check").
    package var reason: String
    /// The session's instance id (evidence).
    package var instanceId: [UInt8]
    package var bannedAt: Date
}

/// One audit log line. Only public identifiers: operation, key id, party (index, device key hex, or
/// operator name) and outcome; the store's API gives no way to put secret bytes here.
package struct AuditEntry: Sendable, Equatable {
    package var id: Int64
    package var at: Date
    package var operation: String
    package var keyId: String?
    package var party: String?
    package var outcome: String
}

/// Whether and by whom a key is owned (session.md §9.2).
package enum KeyOwnership: Sendable, Equatable {
    /// The node holds no share of the key.
    case unknownKey
    /// The token subject recorded when the key was created.
    case owned(by: String)
    /// The node holds shares of the key but no owner: nobody may use it (security review finding 11).
    case unowned
}
