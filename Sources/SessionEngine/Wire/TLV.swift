/// The TLV payload encoding of SETUP, ACCEPT and LINK_OPEN (`docs/protocol/session.md` §4.1):
/// `u8 tag ‖ u16 length ‖ value`, tags strictly ascending, no duplicates, fixed-size fields exact,
/// nothing left over. Tags 0x01–0x7F are defined by the session version (unknown → UNKNOWN_FIELD);
/// 0x80–0xFF are optional extensions (unknown ones are kept, so signatures and hashes still cover
/// them, but otherwise ignored).
package struct TLVRecord: Sendable, Equatable {
    package let tag: UInt8
    package let value: [UInt8]
    package init(tag: UInt8, value: [UInt8]) {
        self.tag = tag
        self.value = value
    }
}

/// A field's size rule for decoding.
package enum TLVFieldSize: Sendable, Equatable {
    /// Exactly this many bytes.
    case exactly(Int)
    /// One of these lengths.
    case oneOf([Int])
    /// Between the bounds, inclusive.
    case range(ClosedRange<Int>)

    func admits(_ count: Int) -> Bool {
        switch self {
        case .exactly(let n): return count == n
        case .oneOf(let ns): return ns.contains(count)
        case .range(let r): return r.contains(count)
        }
    }
}

/// A decoded TLV payload.
package struct TLVPayload: Sendable, Equatable {
    /// Records in ascending tag order.
    package private(set) var records: [TLVRecord]

    /// Builds a payload from records (sorted by tag; duplicate tags are a programming error the
    /// decoder would reject, so `encoded()` of such a payload will not decode).
    package init(_ records: [TLVRecord]) {
        self.records = records.sorted { $0.tag < $1.tag }
    }

    /// The value of a tag.
    package subscript(tag: UInt8) -> [UInt8]? {
        records.first { $0.tag == tag }?.value
    }

    /// Tags present.
    package var tags: [UInt8] { records.map(\.tag) }

    /// The wire bytes.
    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        for record in records {
            writer.append(uint8: record.tag)
            writer.append(uint16: UInt16(clamping: record.value.count))
            writer.append(record.value)
        }
        return writer.bytes
    }

    /// Decodes strictly against a field table (session.md §4.1): truncation, non-ascending or duplicate tags and
    /// wrong lengths of known fields are MALFORMED; an unknown tag in 0x01–0x7F is UNKNOWN_FIELD;
    /// unknown tags ≥ 0x80 are kept and otherwise ignored.
    package static func decode(_ bytes: [UInt8], fields: [UInt8: TLVFieldSize]) throws(SessionError) -> TLVPayload {
        var reader = WireReader(bytes)
        var records: [TLVRecord] = []
        var previous: Int = -1
        var unknownField = false
        while !reader.isAtEnd {
            let tag = try reader.readUInt8()
            let length = Int(try reader.readUInt16())
            let value = try reader.read(length)
            guard Int(tag) > previous else { throw .malformed }
            previous = Int(tag)
            if let size = fields[tag] {
                guard size.admits(length) else { throw .malformed }
            } else if tag < 0x80 {
                // Reported after the whole payload parsed, so a truncated payload stays MALFORMED.
                unknownField = true
            }
            records.append(TLVRecord(tag: tag, value: value))
        }
        if unknownField { throw .detected(.unknownField, blamed: nil) }
        return TLVPayload(records)
    }
}
