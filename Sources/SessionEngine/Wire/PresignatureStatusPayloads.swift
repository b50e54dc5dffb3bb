import MPCCrypto
import MPCProtocols

/// PRESIG_QUERY (`docs/protocol/session.md` §8.6, protocol v1.2): the app asks node X which of `ids` — the
/// presignatures of key `keyID` it made with X — X still holds. `key_id (32) ‖ u16 n ‖ n × presig_id (32)`,
/// 1 ≤ n ≤ 256, no id twice. Sent as the body of a preSignFinal POST (bearer token; nothing else
/// authenticates it: it changes nothing and reveals only the state of ids the asker already knows).
package struct PresignatureQueryPayload: Sendable, Equatable {
    package static let maximumIds = 256
    package static let maximumByteCount = 32 + 2 + 32 * maximumIds

    package var keyID: KeyID
    package var ids: [InstanceID]

    package init(keyID: KeyID, ids: [InstanceID]) {
        self.keyID = keyID
        self.ids = ids
    }

    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.append(keyID)
        writer.append(uint16: UInt16(ids.count))
        for id in ids { writer.append(id) }
        return writer.bytes
    }

    /// Strict decoding; anything else is MALFORMED.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        keyID = try reader.read(KeyID.self)
        let count = Int(try reader.readUInt16())
        guard count >= 1, count <= Self.maximumIds else { throw .malformed }
        var ids: [InstanceID] = []
        for _ in 0..<count { ids.append(try reader.read(InstanceID.self)) }
        try reader.finish()
        guard Set(ids.map(\.bytes)).count == ids.count else { throw .malformed }
        self.ids = ids
    }

    /// The query frame to node `signer` (`instanceID`: a fresh random query id, echoed in the answer).
    package func frame(signer: PartyIndex, instanceID: InstanceID) -> Frame {
        let payload = encoded()
        let header = FrameHeader(kind: .presigQuery, sender: 0, receiver: signer, length: UInt32(payload.count),
                                 instanceID: instanceID)
        return Frame(header: header, sealed: payload)
    }
}

/// PRESIG_STATUS (session.md §8.6): X's answer, signed by its node key (label `status`), with its certificate in trio:
/// `node_key (32) ‖ u8 has_cert ‖ [certificate] ‖ key_id (32) ‖ u16 n ‖ n × (presig_id (32) ‖ u8 state ‖
/// u64 expires_at_ms)`, one entry per queried id, in the query's order.
package struct PresignatureStatusPayload: Sendable, Equatable {
    /// What X knows of one presignature.
    package enum State: UInt8, Sendable {
        /// No row and no finish record (never stored, expired and collected, deleted with its generation,
        /// key or banned device), or a presignature of another key.
        case unknown = 0
        /// Stored and unused: a FINAL_REQUEST can still consume it.
        case held = 1
        /// Consumed: its finish record answers a resend of the same request.
        case consumed = 2
        /// Stored but past its expiry (refused, collected soon).
        case expired = 3
    }

    package struct Entry: Sendable, Equatable {
        package var id: InstanceID
        package var state: State
        /// Held or expired: the row's expiry (ms); otherwise 0.
        package var expiresAtMilliseconds: UInt64

        package init(id: InstanceID, state: State, expiresAtMilliseconds: UInt64) {
            self.id = id
            self.state = state
            self.expiresAtMilliseconds = expiresAtMilliseconds
        }
    }

    package static let maximumByteCount = 32 + 1 + NodeCertificate.byteCount + 32 + 2 + 41 * PresignatureQueryPayload.maximumIds

    package var nodeKey: Ed25519.VerifyingKey
    /// Trio: the node's certificate; duo: nil (the node key is the app's `cloudVerifyingKey`).
    package var certificate: NodeCertificate?
    package var keyID: KeyID
    package var entries: [Entry]

    package init(nodeKey: Ed25519.VerifyingKey, certificate: NodeCertificate?, keyID: KeyID, entries: [Entry]) {
        self.nodeKey = nodeKey
        self.certificate = certificate
        self.keyID = keyID
        self.entries = entries
    }

    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.append(nodeKey.bytes)
        writer.append(uint8: certificate == nil ? 0 : 1)
        if let certificate { writer.append(certificate.encoded) }
        writer.append(keyID)
        writer.append(uint16: UInt16(entries.count))
        for entry in entries {
            writer.append(entry.id)
            writer.append(uint8: entry.state.rawValue)
            writer.append(uint64: entry.expiresAtMilliseconds)
        }
        return writer.bytes
    }

    /// Strict decoding; anything else (an unknown state included) is MALFORMED.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        guard let key = try? Ed25519.VerifyingKey(bytes: try reader.read(32)) else { throw .malformed }
        nodeKey = key
        switch try reader.readUInt8() {
        case 0: certificate = nil
        case 1:
            guard let certificate = try? NodeCertificate(bytes: try reader.read(NodeCertificate.byteCount)) else { throw .malformed }
            self.certificate = certificate
        default: throw .malformed
        }
        keyID = try reader.read(KeyID.self)
        let count = Int(try reader.readUInt16())
        guard count <= PresignatureQueryPayload.maximumIds else { throw .malformed }
        var entries: [Entry] = []
        for _ in 0..<count {
            let id = try reader.read(InstanceID.self)
            guard let state = State(rawValue: try reader.readUInt8()) else { throw .malformed }
            entries.append(Entry(id: id, state: state, expiresAtMilliseconds: try reader.readUInt64()))
        }
        try reader.finish()
        self.entries = entries
    }

    /// The signed frame to the app, echoing the query's id.
    package func frame(sender: PartyIndex, queryID: InstanceID, nodeSigningKey: Ed25519.SigningKey) -> Frame {
        let payload = encoded()
        let header = FrameHeader(kind: .presigStatus, sender: sender, receiver: 0, length: UInt32(payload.count),
                                 instanceID: queryID)
        return Frame.signed(header: header, payload: payload, key: nodeSigningKey)
    }
}
