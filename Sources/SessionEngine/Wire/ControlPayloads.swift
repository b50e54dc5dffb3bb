import MPCProtocols

/// The signed control payloads of `docs/protocol/session.md` §4.6. Every decoder is strict: exact lengths,
/// known enumerations, nothing left over; failures are MALFORMED.

/// READY (node → other node): `key_id ‖ gen ‖ D`.
package struct ReadyPayload: Sendable, Equatable {
    package var keyID: KeyID, gen: Generation, digest: [UInt8]
    package init(keyID: KeyID, gen: Generation, digest: [UInt8]) {
        self.keyID = keyID; self.gen = gen; self.digest = digest
    }
    package var encoded: [UInt8] { keyID.bytes + gen.bytes + digest }
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        keyID = try reader.read(KeyID.self); gen = try reader.read(Generation.self); digest = try reader.read(32)
        try reader.finish()
    }
}

/// COMMIT (app → all): `key_id ‖ gen ‖ D ‖ u8 context`.
package struct CommitPayload: Sendable, Equatable {
    package enum Context: UInt8, Sendable { case inSession = 1, reconcile = 2 }
    package var keyID: KeyID, gen: Generation, digest: [UInt8]
    package var context: Context
    package init(keyID: KeyID, gen: Generation, digest: [UInt8], context: Context) {
        self.keyID = keyID; self.gen = gen; self.digest = digest; self.context = context
    }
    package var encoded: [UInt8] { keyID.bytes + gen.bytes + digest + [context.rawValue] }
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        keyID = try reader.read(KeyID.self); gen = try reader.read(Generation.self); digest = try reader.read(32)
        guard let context = Context(rawValue: try reader.readUInt8()) else { throw .malformed }
        self.context = context
        try reader.finish()
    }
}

/// OUTCOME (node → app): `key_id ‖ gen ‖ D ‖ u8 outcome ‖ current_gen (zeros if none)`.
package struct OutcomePayload: Sendable, Equatable {
    package enum Outcome: UInt8, Sendable { case committed = 1, aborted = 2, inDoubt = 3 }
    package var keyID: KeyID, gen: Generation, digest: [UInt8]
    package var outcome: Outcome
    /// The node's current generation, nil if none (zeros on the wire).
    package var currentGen: Generation?
    package init(keyID: KeyID, gen: Generation, digest: [UInt8], outcome: Outcome, currentGen: Generation?) {
        self.keyID = keyID; self.gen = gen; self.digest = digest; self.outcome = outcome; self.currentGen = currentGen
    }
    package var encoded: [UInt8] {
        keyID.bytes + gen.bytes + digest + [outcome.rawValue] + (currentGen?.bytes ?? [UInt8](repeating: 0, count: 32))
    }
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        keyID = try reader.read(KeyID.self); gen = try reader.read(Generation.self); digest = try reader.read(32)
        guard let outcome = Outcome(rawValue: try reader.readUInt8()) else { throw .malformed }
        self.outcome = outcome
        let current = try reader.read(Generation.self)
        currentGen = current.bytes.allSatisfy { $0 == 0 } ? nil : current
        try reader.finish()
    }
}

/// ABORT (participant → all): `u16 code ‖ u8 blamed (party or 0xFF) ‖ u8 flags (bit 0 ban, bit 1
/// rollback) ‖ [key_id ‖ gen if rollback] ‖ u16 detail_len ‖ detail (≤ 256, UTF-8, no secrets)`.
package struct AbortPayload: Sendable, Equatable {
    package var code: WireCode
    /// The blamed party, nil = none (0xFF on the wire).
    package var blamed: PartyIndex?
    package var ban: Bool
    /// The rolled-back generation (reconcile, session.md §7.3).
    package var rollback: (keyID: KeyID, gen: Generation)?
    /// UTF-8, ≤ 256 bytes, no secrets.
    package var detail: String

    package init(code: WireCode, blamed: PartyIndex?, ban: Bool = false, rollback: (keyID: KeyID, gen: Generation)? = nil,
                detail: String = "") {
        self.code = code; self.blamed = blamed; self.ban = ban; self.rollback = rollback
        // Truncate on a character boundary.
        var text = detail
        while text.utf8.count > SessionConstants.maximumAbortDetailByteCount { text.removeLast() }
        self.detail = text
    }

    /// The ABORT for a session error this party detected (protocol blame and ban carried over).
    package init(error: SessionError) {
        self.init(code: error.abortCode, blamed: error.blamedParty, ban: error.requiresBan)
    }

    package var encoded: [UInt8] {
        var writer = WireWriter()
        writer.append(uint16: code.rawValue)
        writer.append(uint8: blamed ?? 0xFF)
        writer.append(uint8: (ban ? 1 : 0) | (rollback == nil ? 0 : 2))
        if let rollback { writer.append(rollback.keyID); writer.append(rollback.gen) }
        // `detail` is a public var: never encode more than the decoder accepts (cut bytes may end
        // mid-character only if a caller bypassed `init`; the decoder then rejects the frame).
        let text = Array(detail.utf8.prefix(SessionConstants.maximumAbortDetailByteCount))
        writer.append(uint16: UInt16(text.count))
        writer.append(text)
        return writer.bytes
    }

    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        code = WireCode(rawValue: try reader.readUInt16())
        let party = try reader.readUInt8()
        blamed = party == 0xFF ? nil : party
        let flags = try reader.readUInt8()
        guard flags & ~0x03 == 0, flags & 1 == 0 || blamed != nil else { throw .malformed }
        ban = flags & 1 != 0
        rollback = flags & 2 != 0 ? (try reader.read(KeyID.self), try reader.read(Generation.self)) : nil
        let length = Int(try reader.readUInt16())
        guard length <= SessionConstants.maximumAbortDetailByteCount,
              let text = String(validating: try reader.read(length), as: UTF8.self)
        else { throw .malformed }
        detail = text
        try reader.finish()
    }

    /// How the receiver reports it: the sender's report, never grounds for a local ban (session.md §6.2, §9.4).
    package func sessionError(sender: PartyIndex) -> SessionError {
        .reported(code, by: sender, blamed: blamed, authenticated: true)
    }

    package static func == (lhs: AbortPayload, rhs: AbortPayload) -> Bool { lhs.encoded == rhs.encoded }
}

/// DONE (app → all): `u8 result_type (0 none, 1 ECDSA r‖s‖recid, 2 EdDSA 64-byte signature) ‖ result`.
package enum DonePayload: Sendable, Equatable {
    case none
    /// r ‖ s ‖ recovery id (65 bytes).
    case ecdsa([UInt8])
    /// 64-byte Ed25519 signature.
    case eddsa([UInt8])

    package var encoded: [UInt8] {
        switch self {
        case .none: return [0]
        case .ecdsa(let bytes): return [1] + bytes
        case .eddsa(let bytes): return [2] + bytes
        }
    }

    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        switch try reader.readUInt8() {
        case 0: self = .none
        case 1:
            let result = try reader.read(65)
            guard let recid = result.last, recid <= 3 else { throw .malformed }
            self = .ecdsa(result)
        case 2: self = .eddsa(try reader.read(64))
        default: throw .malformed
        }
        try reader.finish()
    }
}

/// STORED (node → app): `presig_id (32) ‖ key_id ‖ gen ‖ u64 expires_at`.
package struct StoredPayload: Sendable, Equatable {
    package var presigID: InstanceID, keyID: KeyID, gen: Generation
    /// ms since the Unix epoch (the spec's default time unit, session.md §0).
    package var expiresAt: UInt64
    package init(presigID: InstanceID, keyID: KeyID, gen: Generation, expiresAt: UInt64) {
        self.presigID = presigID; self.keyID = keyID; self.gen = gen; self.expiresAt = expiresAt
    }
    package var encoded: [UInt8] { presigID.bytes + keyID.bytes + gen.bytes + expiresAt.bigEndianBytes }
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        presigID = InstanceID(checked: try reader.read(InstanceID.byteCount)); keyID = try reader.read(KeyID.self); gen = try reader.read(Generation.self)
        expiresAt = try reader.readUInt64()
        try reader.finish()
    }
}

/// EXPORT_RESPONSE (duo node → app via the backend): `setup_hash ‖ key_id ‖ gen ‖ u8 party ‖ export
/// message (80 bytes: epk ‖ ct)`.
package struct ExportResponsePayload: Sendable, Equatable {
    package static let exportMessageByteCount = 80
    package var setupHash: SetupHash, keyID: KeyID, gen: Generation
    package var party: PartyIndex
    package var exportMessage: [UInt8]
    package init(setupHash: SetupHash, keyID: KeyID, gen: Generation, party: PartyIndex, exportMessage: [UInt8]) {
        self.setupHash = setupHash; self.keyID = keyID; self.gen = gen; self.party = party
        self.exportMessage = exportMessage
    }
    package var encoded: [UInt8] { setupHash.bytes + keyID.bytes + gen.bytes + [party] + exportMessage }
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        setupHash = SetupHash(checked: try reader.read(SetupHash.byteCount)); keyID = try reader.read(KeyID.self); gen = try reader.read(Generation.self)
        party = try reader.readUInt8()
        exportMessage = try reader.read(Self.exportMessageByteCount)
        try reader.finish()
    }
}
