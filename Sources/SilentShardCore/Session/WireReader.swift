/// Strict big-endian reader over untrusted bytes: every read is bounds-checked and every failure is
/// the same typed error (`MALFORMED` unless the caller says otherwise).
struct WireReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    private let failure: SessionError

    init<Bytes: Collection<UInt8>>(_ bytes: Bytes, failure: SessionError = .detected(.malformed, blamed: nil)) {
        self.bytes = Array(bytes)
        self.offset = 0
        self.failure = failure
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    mutating func read(_ count: Int) throws(SessionError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw failure }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A fixed-size session value (its `byteCount` bytes).
    mutating func read<Value: SessionBytes>(_ type: Value.Type) throws(SessionError) -> Value {
        Value(checked: try read(Value.byteCount))
    }

    mutating func readUInt8() throws(SessionError) -> UInt8 {
        guard remaining >= 1 else { throw failure }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16() throws(SessionError) -> UInt16 {
        let b = try read(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    mutating func readUInt32() throws(SessionError) -> UInt32 {
        let b = try read(4)
        return b.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func readUInt64() throws(SessionError) -> UInt64 {
        let b = try read(8)
        return b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Everything left.
    mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// Fails unless every byte was consumed.
    func finish() throws(SessionError) {
        guard isAtEnd else { throw failure }
    }
}

/// Big-endian writer.
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func append<Bytes: Sequence<UInt8>>(_ data: Bytes) { bytes.append(contentsOf: data) }
    mutating func append(_ value: some SessionBytes) { bytes.append(contentsOf: value.bytes) }
    mutating func append(uint8 value: UInt8) { bytes.append(value) }
    mutating func append(uint16 value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    mutating func append(uint32 value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
    mutating func append(uint64 value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
    }
}

extension UInt64 {
    /// Big-endian bytes.
    var bigEndianBytes: [UInt8] {
        var writer = WireWriter()
        writer.append(uint64: self)
        return writer.bytes
    }
}
