import MPCCrypto
import MPCProtocols

/// A node certificate (`docs/protocol/session.md` §1.3): 142 bytes, signed by the cluster key (trio) or
/// `cloudVerifyingKey` (duo role 3) over `sigmsg("cert", bytes 0..77)`.
package struct NodeCertificate: Sendable, Equatable {
    package static let byteCount = 142
    static let magic = Array("SSNC".utf8)
    package static let version: UInt8 = 1

    /// The node's role.
    package enum Role: UInt8, Sendable {
        case trioA = 1, trioB = 2, duo = 3

        /// The party index the role plays (duo node = 1).
        package var partyIndex: PartyIndex { self == .trioB ? 2 : 1 }
    }

    package let role: Role
    /// Random id of one A/B pair (16 bytes).
    package let groupID: [UInt8]
    /// The certified node key.
    package let nodeKey: Ed25519.VerifyingKey
    /// Validity, seconds since the Unix epoch.
    package let notBefore: UInt64
    package let notAfter: UInt64
    package let serial: UInt64
    /// The issuer's signature (64 bytes).
    package let signature: [UInt8]

    /// The signed part, bytes 0..77.
    package var tbsBytes: [UInt8] {
        Self.tbs(role: role, groupID: groupID, nodeKey: nodeKey, notBefore: notBefore, notAfter: notAfter, serial: serial)
    }

    static func tbs(role: Role, groupID: [UInt8], nodeKey: Ed25519.VerifyingKey, notBefore: UInt64, notAfter: UInt64,
                    serial: UInt64) -> [UInt8] {
        var writer = WireWriter()
        writer.append(magic)
        writer.append(uint8: version)
        writer.append(uint8: role.rawValue)
        writer.append(groupID)
        writer.append(nodeKey.bytes)
        writer.append(uint64: notBefore)
        writer.append(uint64: notAfter)
        writer.append(uint64: serial)
        return writer.bytes
    }

    /// The 142 bytes.
    package var encoded: [UInt8] { tbsBytes + signature }

    /// Issues a certificate (operators and tests).
    package init(role: Role, groupID: [UInt8], nodeKey: Ed25519.VerifyingKey, notBefore: UInt64, notAfter: UInt64,
                serial: UInt64, issuer: Ed25519.SigningKey) {
        self.role = role
        self.groupID = Array(groupID.prefix(16)) + [UInt8](repeating: 0, count: max(0, 16 - groupID.count))
        self.nodeKey = nodeKey
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.serial = serial
        signature = issuer.signature(for: SessionHash.signingInput(.cert, Self.tbs(
            role: role, groupID: self.groupID, nodeKey: nodeKey, notBefore: notBefore, notAfter: notAfter, serial: serial)))
    }

    /// Decodes exactly 142 bytes: magic, version, known role, valid node key. Signature and validity
    /// are checked by `verify`.
    package init(bytes: [UInt8]) throws(SessionError) {
        let fail = SessionError.cloudVerificationFailed(.malformedCertificate)
        guard bytes.count == Self.byteCount else { throw fail }
        var reader = WireReader(bytes, failure: fail)
        guard try reader.read(4) == Self.magic else { throw fail }
        guard try reader.readUInt8() == Self.version else { throw .cloudVerificationFailed(.certificateVersion) }
        guard let role = Role(rawValue: try reader.readUInt8()) else { throw .cloudVerificationFailed(.certificateRole) }
        self.role = role
        groupID = try reader.read(16)
        guard let key = try? Ed25519.VerifyingKey(bytes: try reader.read(32)) else { throw fail }
        nodeKey = key
        notBefore = try reader.readUInt64()
        notAfter = try reader.readUInt64()
        serial = try reader.readUInt64()
        signature = try reader.read(64)
        try reader.finish()
    }
}
