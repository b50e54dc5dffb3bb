import MPCCrypto
import MPCProtocols

/// The ACCEPT payload (`docs/protocol/session.md` §4.4), TLV-encoded, signed by the node key (label `accept`).
package struct AcceptPayload: Sendable, Equatable {
    package enum Tag {
        package static let setupHash: UInt8 = 0x01, nodeKey: UInt8 = 0x02, certificate: UInt8 = 0x03
        package static let sessionKeys: UInt8 = 0x04, nodeTime: UInt8 = 0x05, keyStatus: UInt8 = 0x06
        package static let limits: UInt8 = 0x07
    }

    static let fieldSizes: [UInt8: TLVFieldSize] = [
        Tag.setupHash: .exactly(32), Tag.nodeKey: .exactly(32), Tag.certificate: .exactly(NodeCertificate.byteCount),
        Tag.sessionKeys: .exactly(64), Tag.nodeTime: .exactly(8), Tag.keyStatus: .range(2...98), Tag.limits: .exactly(8),
    ]

    package var setupHash: SetupHash
    package var nodeKey: Ed25519.VerifyingKey
    package var certificate: NodeCertificate?
    package var sessionKeys: SessionPublicKeys
    /// Informative node time, ms.
    package var nodeTime: UInt64?
    package var keyStatus: KeyStatus?
    /// Informative limits: max payload, max transport message.
    package var limits: (maxPayload: UInt32, maxMessage: UInt32)?
    /// Unknown extension fields (≥ 0x80), kept for the signature.
    package var extensions: [TLVRecord] = []

    package init(setupHash: SetupHash, nodeKey: Ed25519.VerifyingKey, certificate: NodeCertificate?,
                sessionKeys: SessionPublicKeys, nodeTime: UInt64?, keyStatus: KeyStatus?,
                limits: (maxPayload: UInt32, maxMessage: UInt32)? = nil) {
        self.setupHash = setupHash
        self.nodeKey = nodeKey
        self.certificate = certificate
        self.sessionKeys = sessionKeys
        self.nodeTime = nodeTime
        self.keyStatus = keyStatus
        self.limits = limits
    }

    package func encoded() -> [UInt8] {
        var records = [
            TLVRecord(tag: Tag.setupHash, value: setupHash.bytes),
            TLVRecord(tag: Tag.nodeKey, value: nodeKey.bytes),
            TLVRecord(tag: Tag.sessionKeys, value: sessionKeys.bytes),
        ]
        if let certificate { records.append(TLVRecord(tag: Tag.certificate, value: certificate.encoded)) }
        if let nodeTime { records.append(TLVRecord(tag: Tag.nodeTime, value: nodeTime.bigEndianBytes)) }
        if let keyStatus { records.append(TLVRecord(tag: Tag.keyStatus, value: keyStatus.encoded)) }
        if let limits {
            var writer = WireWriter()
            writer.append(uint32: limits.maxPayload)
            writer.append(uint32: limits.maxMessage)
            records.append(TLVRecord(tag: Tag.limits, value: writer.bytes))
        }
        return TLVPayload(records + extensions).encoded()
    }

    /// Strict decoding: TLV rules, required fields (0x01, 0x02, 0x04), valid keys → MALFORMED; a
    /// malformed certificate → `cloudVerificationFailed(.malformedCertificate)`.
    package init(bytes: [UInt8]) throws(SessionError) {
        let tlv = try TLVPayload.decode(bytes, fields: Self.fieldSizes)
        guard let hash = tlv[Tag.setupHash].flatMap(SetupHash.init), let key = tlv[Tag.nodeKey], let keys = tlv[Tag.sessionKeys],
              let nodeKey = try? Ed25519.VerifyingKey(bytes: key),
              let sessionKeys = try? SessionPublicKeys(bytes: keys)
        else { throw .malformed }
        setupHash = hash
        self.nodeKey = nodeKey
        self.sessionKeys = sessionKeys
        certificate = try tlv[Tag.certificate].map { bytes throws(SessionError) in try NodeCertificate(bytes: bytes) }
        if let time = tlv[Tag.nodeTime] {
            var reader = WireReader(time)
            nodeTime = try reader.readUInt64()
        }
        keyStatus = try tlv[Tag.keyStatus].map { bytes throws(SessionError) in try KeyStatus(bytes: bytes) }
        if let value = tlv[Tag.limits] {
            var reader = WireReader(value)
            limits = (try reader.readUInt32(), try reader.readUInt32())
        }
        extensions = tlv.records.filter { $0.tag >= 0x80 }
    }

    package static func == (lhs: AcceptPayload, rhs: AcceptPayload) -> Bool {
        lhs.encoded() == rhs.encoded()
    }

    /// The app's checks of session.md §4.4 beyond the frame signature (which `FrameReceiver` verified under
    /// `nodeKey`): `setup_hash` is the app's own; duo: `node_key == cloudVerifyingKey` or a valid
    /// role-3 certificate for it; trio: a valid certificate for `node_key` whose role matches the
    /// sender. Nodes check each other's ACCEPTs the same way against the cluster key.
    package func verify(expectedSetupHash: SetupHash, cloudKey: Ed25519.VerifyingKey, sender: PartyIndex,
                       mode: SessionMode, nowSeconds: UInt64) throws(SessionError) {
        guard setupHash == expectedSetupHash else { throw .cloudVerificationFailed(.setupHashMismatch) }
        if mode == .duo && certificate == nil {
            guard nodeKey == cloudKey else { throw .cloudVerificationFailed(.nodeKeyMismatch) }
            return
        }
        guard let certificate else { throw .cloudVerificationFailed(.certificateMissing) }
        guard certificate.nodeKey == nodeKey else { throw .cloudVerificationFailed(.certificateKeyMismatch) }
        try certificate.verify(issuer: cloudKey, senderIndex: sender, mode: mode, nowSeconds: nowSeconds)
    }

    /// Trio: A's and B's certificates carry the same `group_id` and different node keys; for an
    /// existing key the group equals the one recorded at keygen (session.md §1.3).
    package static func checkGroup(_ accepts: [AcceptPayload], recordedGroupID: [UInt8]?) throws(SessionError) {
        let certificates = accepts.compactMap(\.certificate)
        guard certificates.count == accepts.count else { throw .cloudVerificationFailed(.certificateMissing) }
        guard let group = certificates.first?.groupID else { return }
        guard certificates.allSatisfy({ $0.groupID == group }), recordedGroupID.map({ $0 == group }) ?? true else {
            throw .cloudVerificationFailed(.certificateGroupMismatch)
        }
        guard Set(certificates.map(\.nodeKey.bytes)).count == certificates.count else {
            throw .cloudVerificationFailed(.duplicateNodeKey)
        }
    }
}
