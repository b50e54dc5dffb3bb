import MPCCrypto

/// A fixed-size byte string with one meaning in a session (`docs/protocol/session.md` §1.4–1.5): an instance
/// id, a setup hash, a key id, a generation, a chain code. Each is its own type, so two 32-byte values
/// that travel together (an instance id and a setup hash in a REJECT; a key id and a generation in a
/// COMMIT) cannot be swapped without the compiler noticing. None of them is secret.
package protocol SessionBytes: Hashable, Sendable, CustomStringConvertible {
    /// The size every value of the type has.
    static var byteCount: Int { get }
    /// The bytes as they go on the wire.
    var bytes: [UInt8] { get }
    /// A value from bytes whose size the caller checked (a fixed-size field of a parsed structure).
    init(checked bytes: [UInt8])
}

extension SessionBytes {
    /// A value from outside bytes: `nil` unless there are exactly `byteCount` of them.
    package init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.init(checked: bytes)
    }

    /// The type and the first four bytes in hex (for logs; none of these values is secret).
    package var description: String { "\(Self.self)(\(Hex.encode(Array(bytes.prefix(4))))…)" }
}

/// A session's instance id (session.md §1.4): 32 fresh random bytes per session, bound into every frame header;
/// the replay key of session.md §9.6 and a presignature's id.
package struct InstanceID: SessionBytes {
    package static let byteCount = 32
    package let bytes: [UInt8]
    package init(checked bytes: [UInt8]) { self.bytes = bytes }

    /// A fresh instance id from the system CSPRNG.
    package static func random() -> InstanceID { InstanceID(checked: SecureRandom.bytes(count: byteCount)) }

    /// Zeros: the instance id of a REJECT to a SETUP the node could not parse (session.md §4.5), bound to no session.
    package static let unbound = InstanceID(checked: [UInt8](repeating: 0, count: byteCount))
}

/// The hash of a session's signed SETUP (session.md §4.1), which every ACCEPT, REJECT and the transcript bind.
package struct SetupHash: SessionBytes {
    package static let byteCount = 32
    package let bytes: [UInt8]
    package init(checked bytes: [UInt8]) { self.bytes = bytes }

    /// Zeros: the setup hash of a REJECT to a SETUP the node could not parse (session.md §4.5).
    package static let unbound = SetupHash(checked: [UInt8](repeating: 0, count: byteCount))
}

/// A key's id (session.md §1.5): the protocol key id of its public key, the same at every party; on the route and
/// in the store as hex.
package struct KeyID: SessionBytes {
    package static let byteCount = 32
    package let bytes: [UInt8]
    package init(checked bytes: [UInt8]) { self.bytes = bytes }

    /// Lowercase hex, as routes and stores name the key.
    package var hex: String { Hex.encode(bytes) }
}

/// One generation of a key's shares (session.md §1.5): fresh at every keygen, refresh, recover and import; what
/// commit, reconcile and presignatures bind to.
package struct Generation: SessionBytes {
    package static let byteCount = 32
    package let bytes: [UInt8]
    package init(checked bytes: [UInt8]) { self.bytes = bytes }
}

/// A BIP32 chain code (32 bytes): the root chain code an imported key is shared with (SETUP's
/// `chain_code`), from which soft derivation paths start.
package struct ChainCode: SessionBytes {
    package static let byteCount = 32
    package let bytes: [UInt8]
    package init(checked bytes: [UInt8]) { self.bytes = bytes }
}
