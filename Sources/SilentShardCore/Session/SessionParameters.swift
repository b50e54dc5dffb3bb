import MPCProtocols

/// Session mode (SETUP 0x01): the keyshare's mode, whose raw values are SETUP's codes.
package typealias SessionMode = Keyshare.Mode

extension Keyshare.Mode {
    /// (n, t): duo (2, 2), trio (3, 2).
    package var threshold: (n: UInt8, t: UInt8) { self == .duo ? (2, 2) : (3, 2) }
    /// Every party of the mode: {0, 1} or {0, 1, 2}.
    package var allParties: PartySet {
        PartySet(uncheckedSorted: self == .duo ? [0, 1] : [0, 1, 2])
    }
}

/// A party set on the wire: `u8(count) ‖ u8(index)…`, ascending, no duplicates (session.md §0).
package struct PartySet: Sendable, Equatable, Hashable {
    /// Ascending, distinct party indices.
    package let parties: [PartyIndex]

    init(uncheckedSorted parties: [PartyIndex]) { self.parties = parties }

    /// A set from indices in any order (duplicates are removed).
    package init(_ parties: some Sequence<PartyIndex>) {
        self.parties = Array(Set(parties)).sorted()
    }

    /// Decodes strictly: count matches, ascending, no duplicates, not empty. Failure: INVALID_PARAMETER.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes, failure: .invalidParameter)
        let count = Int(try reader.readUInt8())
        let parties = try reader.read(count)
        try reader.finish()
        guard count > 0, zip(parties, parties.dropFirst()).allSatisfy({ $0 < $1 }) else { throw .invalidParameter }
        self.parties = parties
    }

    package var encoded: [UInt8] { [UInt8(clamping: parties.count)] + parties }
    package func contains(_ party: PartyIndex) -> Bool { parties.contains(party) }
    package var count: Int { parties.count }
    package func isSubset(of other: PartySet) -> Bool { Set(parties).isSubset(of: other.parties) }
}

/// A derivation path on the wire: `u8(depth) ‖ u32(index)…`, bit 31 = hardened (dkls23.md §4).
package struct DerivationPathBytes: Sendable, Equatable {
    package static let hardenedBit: UInt32 = 0x8000_0000
    package let indices: [UInt32]

    package init(indices: [UInt32]) { self.indices = indices }

    /// Decodes strictly (exact length). Failure: INVALID_PARAMETER.
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes, failure: .invalidParameter)
        let depth = Int(try reader.readUInt8())
        var indices: [UInt32] = []
        for _ in 0..<depth { indices.append(try reader.readUInt32()) }
        try reader.finish()
        self.indices = indices
    }

    package var encoded: [UInt8] {
        var writer = WireWriter()
        writer.append(uint8: UInt8(clamping: indices.count))
        for index in indices { writer.append(uint32: index) }
        return writer.bytes
    }

    /// Whether every step is non-hardened.
    package var isSoft: Bool { indices.allSatisfy { $0 & Self.hardenedBit == 0 } }
}
