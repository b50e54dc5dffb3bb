import MPCCrypto
import MPCProtocols

/// The SETUP payload (`docs/protocol/session.md` §4.2), TLV-encoded. Enumerated fields keep their raw wire
/// value so that an unknown value reaches the validation step that owns it (session.md §4.3) instead of failing
/// decoding; typed accessors return nil for unknown values.
package struct SetupPayload: Sendable, Equatable {
    /// TLV tags.
    package enum Tag {
        package static let mode: UInt8 = 0x01, algorithm: UInt8 = 0x02, operation: UInt8 = 0x03
        package static let protocolVersion: UInt8 = 0x04, timestamp: UInt8 = 0x05, deviceKey: UInt8 = 0x06
        package static let sessionKeys: UInt8 = 0x07, cloudKey: UInt8 = 0x08, groupID: UInt8 = 0x09
        package static let threshold: UInt8 = 0x0A, participants: UInt8 = 0x0B, keyID: UInt8 = 0x0C
        package static let gen: UInt8 = 0x0D, path: UInt8 = 0x0E, message: UInt8 = 0x0F, publicKey: UInt8 = 0x10
        package static let chainCode: UInt8 = 0x11, exportKey: UInt8 = 0x12, appState: UInt8 = 0x13
        package static let presignTTL: UInt8 = 0x14, holders: UInt8 = 0x15, clientInfo: UInt8 = 0x80
    }

    /// Decoding rules: fixed-size fields exact; variable fields bounded by what fits a u16 (their
    /// content rules are session.md §4.3 step 8, INVALID_PARAMETER).
    static let fieldSizes: [UInt8: TLVFieldSize] = [
        Tag.mode: .exactly(1), Tag.algorithm: .exactly(1), Tag.operation: .exactly(1),
        Tag.protocolVersion: .exactly(1), Tag.timestamp: .exactly(8), Tag.deviceKey: .oneOf([33, 66]),
        Tag.sessionKeys: .exactly(64), Tag.cloudKey: .exactly(32), Tag.groupID: .exactly(16),
        Tag.threshold: .exactly(2), Tag.participants: .range(1...0xFFFF), Tag.keyID: .exactly(32),
        Tag.gen: .exactly(32), Tag.path: .range(1...0xFFFF), Tag.message: .range(0...0xFFFF),
        Tag.publicKey: .oneOf([32, 33]), Tag.chainCode: .exactly(32), Tag.exportKey: .exactly(32),
        Tag.appState: .range(1...0xFFFF), Tag.presignTTL: .exactly(4), Tag.holders: .range(1...0xFFFF),
        Tag.clientInfo: .range(0...SessionConstants.maximumClientInfoByteCount),
    ]

    package var modeCode: UInt8
    package var algorithmCode: UInt8
    package var operationCode: UInt8
    package var protocolVersion: UInt8
    /// Milliseconds since the Unix epoch.
    package var timestamp: UInt64
    /// `type ‖ key` (33 or 66 bytes).
    package var deviceKey: [UInt8]
    /// Ed25519 pk ‖ X25519 pk; absent only in the duo export POST.
    package var sessionKeys: [UInt8]?
    package var cloudKey: [UInt8]
    package var groupID: [UInt8]?
    /// u8 n ‖ u8 t.
    package var threshold: [UInt8]
    package var participants: [UInt8]
    package var keyID: KeyID?
    package var gen: Generation?
    package var path: [UInt8]?
    package var message: [UInt8]?
    package var publicKey: [UInt8]?
    package var chainCode: ChainCode?
    package var exportKey: [UInt8]?
    package var appState: [UInt8]?
    package var presignTTL: UInt32?
    package var holders: [UInt8]?
    package var clientInfo: [UInt8]?
    /// Unknown extension fields (tags ≥ 0x80), kept so that re-encoding reproduces the signed bytes.
    package var extensions: [TLVRecord]

    /// A SETUP with the always-required fields; set the operation's fields afterwards.
    package init(mode: SessionMode, algorithm: SessionAlgorithm, operation: SessionOperation, timestamp: UInt64,
                deviceKey: DeviceKey, sessionKeys: SessionPublicKeys?, cloudKey: [UInt8], participants: PartySet) {
        modeCode = mode.rawValue
        algorithmCode = algorithm.rawValue
        operationCode = operation.rawValue
        protocolVersion = SessionConstants.protocolVersion
        self.timestamp = timestamp
        self.deviceKey = deviceKey.identity
        self.sessionKeys = sessionKeys?.bytes
        self.cloudKey = cloudKey
        groupID = nil
        threshold = [mode.threshold.n, mode.threshold.t]
        self.participants = participants.encoded
        keyID = nil; gen = nil; path = nil; message = nil; publicKey = nil; chainCode = nil
        exportKey = nil; appState = nil; presignTTL = nil; holders = nil; clientInfo = nil
        extensions = []
    }

    package var mode: SessionMode? { SessionMode(rawValue: modeCode) }
    package var algorithm: SessionAlgorithm? { SessionAlgorithm(rawValue: algorithmCode) }
    package var operation: SessionOperation? { SessionOperation(rawValue: operationCode) }

    /// The TLV form.
    package var tlv: TLVPayload {
        var records: [TLVRecord] = [
            TLVRecord(tag: Tag.mode, value: [modeCode]),
            TLVRecord(tag: Tag.algorithm, value: [algorithmCode]),
            TLVRecord(tag: Tag.operation, value: [operationCode]),
            TLVRecord(tag: Tag.protocolVersion, value: [protocolVersion]),
            TLVRecord(tag: Tag.timestamp, value: timestamp.bigEndianBytes),
            TLVRecord(tag: Tag.deviceKey, value: deviceKey),
            TLVRecord(tag: Tag.cloudKey, value: cloudKey),
            TLVRecord(tag: Tag.threshold, value: threshold),
            TLVRecord(tag: Tag.participants, value: participants),
        ]
        func add(_ tag: UInt8, _ value: [UInt8]?) {
            if let value { records.append(TLVRecord(tag: tag, value: value)) }
        }
        add(Tag.sessionKeys, sessionKeys)
        add(Tag.groupID, groupID)
        add(Tag.keyID, keyID?.bytes)
        add(Tag.gen, gen?.bytes)
        add(Tag.path, path)
        add(Tag.message, message)
        add(Tag.publicKey, publicKey)
        add(Tag.chainCode, chainCode?.bytes)
        add(Tag.exportKey, exportKey)
        add(Tag.appState, appState)
        add(Tag.presignTTL, presignTTL.map { ttl in
            var writer = WireWriter()
            writer.append(uint32: ttl)
            return writer.bytes
        })
        add(Tag.holders, holders)
        add(Tag.clientInfo, clientInfo)
        records += extensions
        return TLVPayload(records)
    }

    /// The payload bytes.
    package func encoded() -> [UInt8] { tlv.encoded() }

    /// Decodes strictly (session.md §4.1): MALFORMED / UNKNOWN_FIELD; a missing always-required field (0x01–0x06,
    /// 0x08, 0x0A, 0x0B) is MALFORMED. Which optional fields an operation allows is checked later
    /// (session.md §4.3 step 8, INVALID_PARAMETER).
    package init(bytes: [UInt8]) throws(SessionError) {
        let tlv = try TLVPayload.decode(bytes, fields: Self.fieldSizes)
        func required(_ tag: UInt8) throws(SessionError) -> [UInt8] {
            guard let value = tlv[tag] else { throw .malformed }
            return value
        }
        func byte(_ tag: UInt8) throws(SessionError) -> UInt8 {
            guard let value = try required(tag).first else { throw .malformed }
            return value
        }
        modeCode = try byte(Tag.mode)
        algorithmCode = try byte(Tag.algorithm)
        operationCode = try byte(Tag.operation)
        protocolVersion = try byte(Tag.protocolVersion)
        var reader = WireReader(try required(Tag.timestamp))
        timestamp = try reader.readUInt64()
        deviceKey = try required(Tag.deviceKey)
        sessionKeys = tlv[Tag.sessionKeys]
        cloudKey = try required(Tag.cloudKey)
        groupID = tlv[Tag.groupID]
        threshold = try required(Tag.threshold)
        participants = try required(Tag.participants)
        // The TLV sizes are exact (32 bytes each).
        keyID = tlv[Tag.keyID].flatMap(KeyID.init)
        gen = tlv[Tag.gen].flatMap(Generation.init)
        path = tlv[Tag.path]
        message = tlv[Tag.message]
        publicKey = tlv[Tag.publicKey]
        chainCode = tlv[Tag.chainCode].flatMap(ChainCode.init)
        exportKey = tlv[Tag.exportKey]
        appState = tlv[Tag.appState]
        if let ttl = tlv[Tag.presignTTL] {
            var ttlReader = WireReader(ttl)
            presignTTL = try ttlReader.readUInt32()
        } else {
            presignTTL = nil
        }
        holders = tlv[Tag.holders]
        clientInfo = tlv[Tag.clientInfo]
        extensions = tlv.records.filter { $0.tag >= 0x80 && Self.fieldSizes[$0.tag] == nil }
    }

    /// Tags present among the operation-specific ones (0x07, 0x09, 0x0C–0x15).
    package var presentOptionalTags: Set<UInt8> {
        Set(tlv.tags.filter { Self.operationTags.contains($0) })
    }

    /// The operation-specific tags (0x07, 0x09, 0x0C–0x15) whose presence the operation table rules.
    package static let operationTags: Set<UInt8> = [
        Tag.sessionKeys, Tag.groupID, Tag.keyID, Tag.gen, Tag.path, Tag.message, Tag.publicKey, Tag.chainCode,
        Tag.exportKey, Tag.appState, Tag.presignTTL, Tag.holders,
    ]
}
