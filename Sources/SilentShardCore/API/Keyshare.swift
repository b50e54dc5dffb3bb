import Foundation
import MPCCrypto
import MPCProtocols

/// One party's share of a threshold key, as the SDK hands it to the app: the protocol keyshare
/// (DKLs23 for ECDSA, FROST for EdDSA) plus the session mode it was created in.
///
/// Public fields (`keyId`, `publicKey`, `rootChainCode`, …) are derived from the protocol keyshare
/// on every decode, so they can never disagree with the secret part. `description`, `dump` and
/// debuggers show public fields only (the secret share is never printed).
///
/// Serialization (versioned): `"SSKS" ‖ u8 version (1) ‖ u8 algorithm ‖ u8 mode ‖ u32 len ‖ protocol
/// keyshare bytes` (DKLs23: `DKLsKeyshare.serialized()`; FROST: `FROST.Keyshare.encoded`); a trio
/// keyshare, which records its cluster's `group_id` (`docs/protocol/session.md` §1.3), is version 2:
/// `"SSKS" ‖ 2 ‖ u8 algorithm ‖ u8 mode ‖ group_id (16) ‖ u32 len ‖ protocol keyshare bytes`. Treat the
/// serialized bytes as secret.
public struct Keyshare: Sendable, Equatable, SecretRedacting {
    /// The signature scheme of a key.
    public enum Algorithm: UInt8, Sendable, CaseIterable {
        /// ECDSA over secp256k1 (DKLs23).
        case ecdsa = 1
        /// EdDSA over Ed25519 (FROST).
        case eddsa = 2
    }

    /// Which deployment the key belongs to.
    public enum Mode: UInt8, Sendable, CaseIterable {
        /// App + one cloud node, 2-of-2.
        case duo = 1
        /// App + two cloud nodes, 2-of-3.
        case trio = 2
    }

    /// The serialization version written by `serialized()` for keyshares without a group id.
    public static let serializationVersion: UInt8 = 1
    /// The serialization version written for keyshares with a group id (trio).
    public static let groupSerializationVersion: UInt8 = 2
    private static let magic: [UInt8] = Array("SSKS".utf8)

    /// The key's signature scheme.
    public let algorithm: Algorithm
    /// The deployment mode.
    public let mode: Mode
    /// The key id: lowercase hex of the protocol key id (32 bytes).
    public let keyId: String
    /// The joint public key: ECDSA 33-byte compressed SEC1; EdDSA 32 bytes.
    public let publicKey: Data
    /// The root chain code (32 bytes) for public child derivation.
    public let rootChainCode: Data
    /// Signers needed (t).
    public let threshold: Int
    /// Number of share holders (n).
    public let partyCount: Int
    /// This share's party index (0 = the app).
    public let party: UInt8
    /// The generation id (32 bytes), equal at all parties, new on every share change.
    public let generation: Data
    /// Trio: the `group_id` (16 bytes) of the node pair that holds the other shares, pinned at keygen;
    /// every later session checks the nodes' certificates against it (session.md §1.3). nil in duo.
    public let groupId: Data?

    /// The protocol keyshare's own serialization (secret).
    let protocolBytes: [UInt8]
    /// The decoded protocol keyshare, validated once when this value was made: decoding re-runs the
    /// full consistency checks (point multiplications), which cost ~0.4 ms per EdDSA operation and side.
    private let decoded: Decoded

    private enum Decoded: Sendable {
        case dkls(DKLsKeyshare)
        case frost(FROST.Keyshare)
    }

    /// Wraps a DKLs23 keyshare.
    public init(dkls keyshare: DKLsKeyshare, mode: Mode, groupId: [UInt8]? = nil) throws(SilentShardError) {
        guard let compressed = try? keyshare.publicKey.compressed() else { throw .invalidKeyshare(reason: "identity public key") }
        algorithm = .ecdsa
        self.mode = mode
        keyId = Hex.encode(keyshare.keyId)
        publicKey = Data(compressed)
        rootChainCode = Data(keyshare.rootChainCode)
        threshold = keyshare.threshold
        partyCount = keyshare.partyCount
        party = keyshare.partyIndex
        generation = Data(keyshare.generation)
        self.groupId = try Self.checkedGroup(groupId)
        protocolBytes = keyshare.serialized()
        decoded = .dkls(keyshare)
    }

    /// Wraps a FROST keyshare.
    public init(frost keyshare: FROST.Keyshare, mode: Mode) {
        algorithm = .eddsa
        self.mode = mode
        keyId = Hex.encode(keyshare.keyId)
        publicKey = Data(keyshare.publicKey.bytes)
        rootChainCode = Data(keyshare.chainCode)
        threshold = Int(keyshare.threshold)
        partyCount = Int(keyshare.parties)
        party = keyshare.party
        generation = Data(keyshare.generation)
        groupId = nil
        protocolBytes = keyshare.encoded
        decoded = .frost(keyshare)
    }

    /// Wraps a FROST keyshare of a trio key with its cluster's 16-byte `group_id`.
    public init(frost keyshare: FROST.Keyshare, mode: Mode, groupId: [UInt8]?) throws(SilentShardError) {
        algorithm = .eddsa
        self.mode = mode
        keyId = Hex.encode(keyshare.keyId)
        publicKey = Data(keyshare.publicKey.bytes)
        rootChainCode = Data(keyshare.chainCode)
        threshold = Int(keyshare.threshold)
        partyCount = Int(keyshare.parties)
        party = keyshare.party
        generation = Data(keyshare.generation)
        self.groupId = try Self.checkedGroup(groupId)
        protocolBytes = keyshare.encoded
        decoded = .frost(keyshare)
    }

    private static func checkedGroup(_ group: [UInt8]?) throws(SilentShardError) -> Data? {
        guard let group else { return nil }
        guard group.count == 16 else { throw .invalidKeyshare(reason: "group id must be 16 bytes") }
        return Data(group)
    }

    /// Decodes the protocol keyshare bytes of `algorithm` (as stored by a node or in a `StoredShare`).
    public init(algorithm: Algorithm, mode: Mode, protocolBytes bytes: [UInt8], groupId: [UInt8]? = nil) throws(SilentShardError) {
        switch algorithm {
        case .ecdsa:
            let share: DKLsKeyshare
            do {
                share = try DKLsKeyshare(serialized: bytes)
            } catch ProtocolError.invalidInput(.unsupportedKeyshareVersion) {
                // Protocol v1 (KOS) keyshares are not migrated (dkls23.md §11): say so instead of "corrupt".
                throw .invalidKeyshare(reason: "DKLs23 keyshare format version \(bytes.first ?? 0) is not supported "
                                       + "(this SDK reads version \(DKLsKeyshare.version))")
            } catch {
                throw .invalidKeyshare(reason: "DKLs23 keyshare does not decode")
            }
            try self.init(dkls: share, mode: mode, groupId: groupId)
        case .eddsa:
            guard let share = try? FROST.Keyshare(encoded: bytes) else { throw .invalidKeyshare(reason: "FROST keyshare does not decode") }
            try self.init(frost: share, mode: mode, groupId: groupId)
        }
    }

    /// Decodes `serialized()` output. Any malformed, truncated or unknown-version input is
    /// `invalidKeyshare`; it never traps.
    public init(serialized data: Data) throws(SilentShardError) {
        let bytes = [UInt8](data)
        guard bytes.count >= 11, Array(bytes[0..<4]) == Self.magic else { throw .invalidKeyshare(reason: "not a keyshare") }
        let version = bytes[4]
        guard version == Self.serializationVersion || version == Self.groupSerializationVersion else {
            throw .invalidKeyshare(reason: "unsupported version \(version)")
        }
        guard let algorithm = Algorithm(rawValue: bytes[5]), let mode = Mode(rawValue: bytes[6]) else {
            throw .invalidKeyshare(reason: "unknown algorithm or mode")
        }
        var offset = 7
        var group: [UInt8]?
        if version == Self.groupSerializationVersion {
            guard bytes.count >= 27 else { throw .invalidKeyshare(reason: "not a keyshare") }
            group = Array(bytes[7..<23])
            offset = 23
        }
        let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
        guard bytes.count - (offset + 4) == length else { throw .invalidKeyshare(reason: "length mismatch") }
        try self.init(algorithm: algorithm, mode: mode, protocolBytes: Array(bytes[(offset + 4)...]), groupId: group)
    }

    /// The versioned serialization (secret: it contains the share).
    public func serialized() -> Data {
        let n = UInt32(protocolBytes.count)
        var out = Self.magic
        if let groupId {
            out += [Self.groupSerializationVersion, algorithm.rawValue, mode.rawValue] + [UInt8](groupId)
        } else {
            out += [Self.serializationVersion, algorithm.rawValue, mode.rawValue]
        }
        out += [UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        return Data(out + protocolBytes)
    }

    /// The DKLs23 keyshare (ECDSA only).
    public func dklsKeyshare() throws(SilentShardError) -> DKLsKeyshare {
        guard case .dkls(let share) = decoded else { throw .invalidKeyshare(reason: "not a valid ECDSA keyshare") }
        return share
    }

    /// The FROST keyshare (EdDSA only).
    public func frostKeyshare() throws(SilentShardError) -> FROST.Keyshare {
        guard case .frost(let share) = decoded else { throw .invalidKeyshare(reason: "not a valid EdDSA keyshare") }
        return share
    }

    /// The protocol keyshare bytes (secret), for storage layers.
    public var protocolKeyshareBytes: [UInt8] { protocolBytes }

    /// The raw key id (32 bytes).
    public var keyIdBytes: [UInt8] { (try? Hex.decode(keyId)) ?? [] }

    /// Equality on public identity only (algorithm, mode, key id, party, generation, public key, chain
    /// code, t, n): the generation names one share set, and comparing secret bytes with a
    /// variable-time `==` is avoided (docs/design.md §5.1).
    public static func == (lhs: Keyshare, rhs: Keyshare) -> Bool {
        lhs.algorithm == rhs.algorithm && lhs.mode == rhs.mode && lhs.keyId == rhs.keyId && lhs.party == rhs.party
            && lhs.generation == rhs.generation && lhs.publicKey == rhs.publicKey && lhs.rootChainCode == rhs.rootChainCode
            && lhs.threshold == rhs.threshold && lhs.partyCount == rhs.partyCount && lhs.groupId == rhs.groupId
    }

    /// Public fields only.
    public var description: String {
        "Keyshare(\(algorithm), \(mode), key \(keyId), party \(party), \(threshold)-of-\(partyCount), share redacted)"
    }
}
