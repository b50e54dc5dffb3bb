/// `app_state` (SETUP 0x13, reconcile; `docs/protocol/session.md` §4.7):
/// `u8 flags (bit 0 current present, bit 1 staged present) ‖ [current_gen] ‖ [staged_gen ‖ staged_D]`.
package struct AppState: Sendable, Equatable {
    package var currentGen: Generation?
    /// The staged generation and its commit digest `D`.
    package var staged: (gen: Generation, digest: [UInt8])?

    package init(currentGen: Generation?, staged: (gen: Generation, digest: [UInt8])?) {
        self.currentGen = currentGen
        self.staged = staged
    }

    package var encoded: [UInt8] {
        var flags: UInt8 = 0
        if currentGen != nil { flags |= 1 }
        if staged != nil { flags |= 2 }
        var writer = WireWriter()
        writer.append(uint8: flags)
        if let currentGen { writer.append(currentGen) }
        if let staged { writer.append(staged.gen); writer.append(staged.digest) }
        return writer.bytes
    }

    /// Strict decoding: unknown flag bits, wrong lengths → INVALID_PARAMETER.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes, failure: .invalidParameter)
        let flags = try reader.readUInt8()
        guard flags & ~0x03 == 0 else { throw .invalidParameter }
        currentGen = flags & 1 != 0 ? try reader.read(Generation.self) : nil
        staged = flags & 2 != 0 ? (try reader.read(Generation.self), try reader.read(32)) : nil
        try reader.finish()
    }

    package static func == (lhs: AppState, rhs: AppState) -> Bool {
        lhs.currentGen == rhs.currentGen && lhs.staged?.gen == rhs.staged?.gen && lhs.staged?.digest == rhs.staged?.digest
    }
}

/// `key_status` (ACCEPT 0x06): `u8 flags (bit 0 current, bit 1 prepared, bit 2 prepared record holds
/// the app's COMMIT) ‖ [current_gen] ‖ [prepared_gen ‖ prepared_D] ‖ u8 decision`.
package struct KeyStatus: Sendable, Equatable {
    /// The node's decision-log entry for the app's staged gen.
    package enum Decision: UInt8, Sendable {
        case unknown = 0, committed = 1, aborted = 2
    }

    package var currentGen: Generation?
    package var prepared: (gen: Generation, digest: [UInt8])?
    /// Whether the PREPARED record holds the app's COMMIT (only meaningful with `prepared`).
    package var preparedHoldsCommit: Bool
    package var decision: Decision

    package init(currentGen: Generation?, prepared: (gen: Generation, digest: [UInt8])?, preparedHoldsCommit: Bool,
                decision: Decision) {
        self.currentGen = currentGen
        self.prepared = prepared
        self.preparedHoldsCommit = preparedHoldsCommit
        self.decision = decision
    }

    package var encoded: [UInt8] {
        var flags: UInt8 = 0
        if currentGen != nil { flags |= 1 }
        if prepared != nil { flags |= 2 }
        if prepared != nil && preparedHoldsCommit { flags |= 4 }
        var writer = WireWriter()
        writer.append(uint8: flags)
        if let currentGen { writer.append(currentGen) }
        if let prepared { writer.append(prepared.gen); writer.append(prepared.digest) }
        writer.append(uint8: decision.rawValue)
        return writer.bytes
    }

    /// Strict decoding: unknown flag bits, bit 2 without bit 1, unknown decision, wrong lengths →
    /// MALFORMED.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        let flags = try reader.readUInt8()
        guard flags & ~0x07 == 0, flags & 4 == 0 || flags & 2 != 0 else { throw .malformed }
        currentGen = flags & 1 != 0 ? try reader.read(Generation.self) : nil
        prepared = flags & 2 != 0 ? (try reader.read(Generation.self), try reader.read(32)) : nil
        preparedHoldsCommit = flags & 4 != 0
        guard let decision = Decision(rawValue: try reader.readUInt8()) else { throw .malformed }
        self.decision = decision
        try reader.finish()
    }

    package static func == (lhs: KeyStatus, rhs: KeyStatus) -> Bool {
        lhs.currentGen == rhs.currentGen && lhs.prepared?.gen == rhs.prepared?.gen
            && lhs.prepared?.digest == rhs.prepared?.digest && lhs.preparedHoldsCommit == rhs.preparedHoldsCommit
            && lhs.decision == rhs.decision
    }
}
