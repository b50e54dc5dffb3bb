import MPCProtocols

/// The 48-byte frame header (`docs/protocol/session.md` §3.1).
package struct FrameHeader: Sendable, Equatable {
    package static let byteCount = 48
    /// Where `instance_id` starts: frozen in every session version (session.md §3.1, §11), so a node can echo it in a
    /// REJECT to a header of a version it does not speak.
    package static let instanceIDOffset = 16
    /// The receiver value meaning "every participant of the session".
    package static let everyParticipant: PartyIndex = 0xFF

    package var version: UInt8
    package var kind: FrameKind
    /// Party index of the author (not of a relay).
    package var sender: PartyIndex
    /// Party index, or 0xFF.
    package var receiver: PartyIndex
    /// Protocol message tag; 0 for non-protocol kinds.
    package var tag: UInt16
    /// Per-stream sequence number; 0 for unsequenced kinds.
    package var seq: UInt32
    /// Payload length (plaintext length for encrypted kinds).
    package var length: UInt32
    /// The session.
    package var instanceID: InstanceID

    package init(version: UInt8 = SessionConstants.sessionVersion, kind: FrameKind, sender: PartyIndex,
                receiver: PartyIndex, tag: UInt16 = 0, seq: UInt32 = 0, length: UInt32, instanceID: InstanceID) {
        self.version = version
        self.kind = kind
        self.sender = sender
        self.receiver = receiver
        self.tag = tag
        self.seq = seq
        self.length = length
        self.instanceID = instanceID
    }

    /// The 48 bytes.
    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.append(uint8: version)
        writer.append(uint8: kind.rawValue)
        writer.append(uint8: sender)
        writer.append(uint8: receiver)
        writer.append(uint16: tag)
        writer.append(uint16: 0)
        writer.append(uint32: seq)
        writer.append(uint32: length)
        writer.append(instanceID.bytes)
        return writer.bytes
    }

    /// Decodes and checks a header (session.md §3.5 step 1, header part), in this order: ≥ 48 bytes (MALFORMED),
    /// version supported (UNSUPPORTED_VERSION), kind known (MALFORMED), reserved = 0 (MALFORMED),
    /// sender/receiver allowed for the kind and tag 0 for non-protocol kinds, seq 0 for unsequenced
    /// kinds (MALFORMED), `len` ≤ the kind's maximum (TOO_LARGE).
    package static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(SessionError) -> FrameHeader {
        var reader = WireReader(bytes)
        guard reader.remaining >= byteCount else { throw .malformed }
        let version = try reader.readUInt8()
        guard SessionConstants.supportedSessionVersions.contains(version) else {
            throw .detected(.unsupportedVersion, blamed: nil)
        }
        guard let kind = FrameKind(rawValue: try reader.readUInt8()) else { throw .malformed }
        let sender = try reader.readUInt8()
        let receiver = try reader.readUInt8()
        let tag = try reader.readUInt16()
        guard try reader.readUInt16() == 0 else { throw .malformed }
        let seq = try reader.readUInt32()
        let length = try reader.readUInt32()
        let instanceID = InstanceID(checked: try reader.read(InstanceID.byteCount))
        guard kind.allows(sender: sender, receiver: receiver) else { throw .malformed }
        guard kind.carriesProtocolTag || tag == 0 else { throw .malformed }
        guard kind.isSequenced || seq == 0 else { throw .malformed }
        guard Int(length) <= kind.maximumPayloadByteCount else { throw .tooLarge }
        return FrameHeader(version: version, kind: kind, sender: sender, receiver: receiver, tag: tag, seq: seq,
                           length: length, instanceID: instanceID)
    }
}
