import MPCProtocols

/// A party set on the wire: `u8(count) ‖ u8(index)…`, ascending, no duplicates (session.md §0).
package struct PartySet: Sendable, Equatable, Hashable {
    /// Ascending, distinct party indices.
    package let parties: [PartyIndex]

    /// A set from indices the caller knows are ascending and distinct.
    package init(uncheckedSorted parties: [PartyIndex]) { self.parties = parties }

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
