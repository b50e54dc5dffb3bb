import MPCProtocols
import SilentShardCore

/// LINK_OPEN (node → node, TLV, node key label `link`; `docs/protocol/session.md` §2.3, §4.7).
package struct LinkOpenPayload: Sendable, Equatable {
    package enum Purpose: UInt8, Sendable { case session = 1, preSignFinal = 2, peerStatus = 3 }
    package enum Tag {
        package static let certificate: UInt8 = 0x01, purpose: UInt8 = 0x02, route: UInt8 = 0x03
        package static let token: UInt8 = 0x04, timestamp: UInt8 = 0x05, clientAddress: UInt8 = 0x06
        package static let nonce: UInt8 = 0x07
    }
    static let fieldSizes: [UInt8: TLVFieldSize] = [
        Tag.certificate: .exactly(NodeCertificate.byteCount), Tag.purpose: .exactly(1), Tag.route: .exactly(3),
        Tag.token: .range(0...SessionConstants.maximumTokenByteCount), Tag.timestamp: .exactly(8),
        Tag.clientAddress: .range(0...SessionConstants.maximumClientAddressByteCount),
        Tag.nonce: .exactly(LinkOpenPayload.nonceByteCount),
    ]
    /// Size of `nonce`.
    package static let nonceByteCount = 16

    package var certificate: NodeCertificate
    package var purpose: Purpose
    /// u8 mode ‖ u8 algorithm ‖ u8 operation (raw codes).
    package var route: [UInt8]
    /// The app's token (UTF-8), optional.
    package var token: [UInt8]?
    /// ms since the epoch (checked against the session.md §9.6 window).
    package var timestamp: UInt64
    /// ≤ 64 ASCII.
    package var clientAddress: [UInt8]?
    /// 16 random bytes that make each LINK_OPEN unique (required for purpose preSignFinal, whose `instance_id`
    /// is the presignature's and repeats on every retry): B keeps the frame's hash in its replay store
    /// (session.md §2.3; security review 2, finding 14).
    package var nonce: [UInt8]?

    package init(certificate: NodeCertificate, purpose: Purpose, mode: SessionMode, algorithm: SessionAlgorithm,
                operation: SessionOperation, token: [UInt8]?, timestamp: UInt64, clientAddress: [UInt8]?,
                nonce: [UInt8]? = nil) {
        self.certificate = certificate
        self.purpose = purpose
        route = [mode.rawValue, algorithm.rawValue, operation.rawValue]
        self.token = token
        self.timestamp = timestamp
        self.clientAddress = clientAddress
        self.nonce = nonce
    }

    package func encoded() -> [UInt8] {
        var records = [
            TLVRecord(tag: Tag.certificate, value: certificate.encoded),
            TLVRecord(tag: Tag.purpose, value: [purpose.rawValue]),
            TLVRecord(tag: Tag.route, value: route),
            TLVRecord(tag: Tag.timestamp, value: timestamp.bigEndianBytes),
        ]
        if let token { records.append(TLVRecord(tag: Tag.token, value: token)) }
        if let clientAddress { records.append(TLVRecord(tag: Tag.clientAddress, value: clientAddress)) }
        if let nonce { records.append(TLVRecord(tag: Tag.nonce, value: nonce)) }
        return TLVPayload(records).encoded()
    }

    /// Strict decoding; required: certificate, purpose, route, timestamp. The client address must be
    /// printable ASCII.
    package init(bytes: [UInt8]) throws(SessionError) {
        let tlv = try TLVPayload.decode(bytes, fields: Self.fieldSizes)
        guard let cert = tlv[Tag.certificate], let purposeByte = tlv[Tag.purpose]?.first,
              let purpose = Purpose(rawValue: purposeByte), let route = tlv[Tag.route], let time = tlv[Tag.timestamp]
        else { throw .malformed }
        certificate = try NodeCertificate(bytes: cert)
        self.purpose = purpose
        self.route = route
        token = tlv[Tag.token]
        var reader = WireReader(time)
        timestamp = try reader.readUInt64()
        clientAddress = tlv[Tag.clientAddress]
        nonce = tlv[Tag.nonce]
        if let address = clientAddress, !address.allSatisfy({ (0x20...0x7E).contains($0) }) { throw .malformed }
    }
}

/// PEER_STATUS (node ↔ node): `u8 type (1 request, 2 response) ‖ key_id ‖ gen ‖` response only:
/// `u8 state (0 unknown, 1 prepared, 2 committed, 3 aborted) ‖ D ‖ u32 len ‖ the app's COMMIT frame`.
package enum PeerStatusPayload: Sendable, Equatable {
    package enum State: UInt8, Sendable { case unknown = 0, prepared = 1, committed = 2, aborted = 3 }

    case request(keyID: KeyID, gen: Generation)
    /// `commitFrame` empty if the node holds none.
    case response(keyID: KeyID, gen: Generation, state: State, digest: [UInt8], commitFrame: [UInt8])

    package var encoded: [UInt8] {
        var writer = WireWriter()
        switch self {
        case .request(let keyID, let gen):
            writer.append(uint8: 1); writer.append(keyID); writer.append(gen)
        case .response(let keyID, let gen, let state, let digest, let commit):
            writer.append(uint8: 2); writer.append(keyID); writer.append(gen)
            writer.append(uint8: state.rawValue); writer.append(digest)
            writer.append(uint32: UInt32(commit.count)); writer.append(commit)
        }
        return writer.bytes
    }

    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        let type = try reader.readUInt8()
        let keyID = try reader.read(KeyID.self), gen = try reader.read(Generation.self)
        switch type {
        case 1: self = .request(keyID: keyID, gen: gen)
        case 2:
            guard let state = State(rawValue: try reader.readUInt8()) else { throw .malformed }
            let digest = try reader.read(32)
            let length = Int(try reader.readUInt32())
            self = .response(keyID: keyID, gen: gen, state: state, digest: digest, commitFrame: try reader.read(length))
        default: throw .malformed
        }
        try reader.finish()
    }
}
