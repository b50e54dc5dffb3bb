/// Strict big-endian reader over untrusted bytes: every read is bounds-checked and every failure is
/// the same typed error (`MALFORMED` unless the caller says otherwise).
package struct WireReader {
    private let bytes: [UInt8]
    package private(set) var offset: Int
    private let failure: SessionError

    /// A reader over `bytes` that fails with `failure` (MALFORMED by default).
    package init<Bytes: Collection<UInt8>>(_ bytes: Bytes, failure: SessionError = .detected(.malformed, blamed: nil)) {
        self.bytes = Array(bytes)
        self.offset = 0
        self.failure = failure
    }

    /// Bytes not read yet.
    package var remaining: Int { bytes.count - offset }
    /// Whether every byte was read.
    package var isAtEnd: Bool { offset == bytes.count }

    /// The next `count` bytes.
    package mutating func read(_ count: Int) throws(SessionError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw failure }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A fixed-size session value (its `byteCount` bytes).
    package mutating func read<Value: SessionBytes>(_ type: Value.Type) throws(SessionError) -> Value {
        Value(checked: try read(Value.byteCount))
    }

    /// The next big-endian `UInt8`.
    package mutating func readUInt8() throws(SessionError) -> UInt8 {
        guard remaining >= 1 else { throw failure }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The next big-endian `UInt16`.
    package mutating func readUInt16() throws(SessionError) -> UInt16 {
        let b = try read(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    /// The next big-endian `UInt32`.
    package mutating func readUInt32() throws(SessionError) -> UInt32 {
        let b = try read(4)
        return b.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The next big-endian `UInt64`.
    package mutating func readUInt64() throws(SessionError) -> UInt64 {
        let b = try read(8)
        return b.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Everything left.
    package mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// Fails unless every byte was consumed.
    package func finish() throws(SessionError) {
        guard isAtEnd else { throw failure }
    }
}

/// Big-endian writer.
package struct WireWriter {
    /// An empty writer.
    package init() {}

    /// The bytes written so far.
    package private(set) var bytes: [UInt8] = []

    package mutating func append<Bytes: Sequence<UInt8>>(_ data: Bytes) { bytes.append(contentsOf: data) }
    package mutating func append(_ value: some SessionBytes) { bytes.append(contentsOf: value.bytes) }
    package mutating func append(uint8 value: UInt8) { bytes.append(value) }
    package mutating func append(uint16 value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }
    package mutating func append(uint32 value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8((value >> UInt32(shift)) & 0xFF)) }
    }
    package mutating func append(uint64 value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
    }
}

extension UInt64 {
    /// Big-endian bytes.
    package var bigEndianBytes: [UInt8] {
        var writer = WireWriter()
        writer.append(uint64: self)
        return writer.bytes
    }
}
