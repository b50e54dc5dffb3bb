import MPCCrypto

/// Strict decoding of a protocol message from `sender`: fixed field sizes, every scalar and point
/// validated, and no trailing bytes (`finish()`). Every failure is `Abort(sender, malformedMessage)`.
public struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0
    /// The party the bytes came from (blamed for any decoding failure).
    public let sender: PartyIndex?

    public init(_ bytes: [UInt8], from sender: PartyIndex?) {
        self.bytes = bytes
        self.sender = sender
    }

    /// Bytes not yet read.
    public var remaining: Int { bytes.count - offset }

    private var malformed: ProtocolError { .abort(party: sender, reason: .malformedMessage) }

    public mutating func read(_ count: Int) throws(ProtocolError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw malformed }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    public mutating func readUInt8() throws(ProtocolError) -> UInt8 {
        try read(1)[0]
    }

    public mutating func readUInt16() throws(ProtocolError) -> UInt16 {
        let b = try read(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    public mutating func readUInt32() throws(ProtocolError) -> UInt32 {
        let b = try read(4)
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }

    /// A secp256k1 scalar (32 bytes big-endian, < n).
    public mutating func readSecp256k1Scalar(nonZero: Bool = false) throws(ProtocolError) -> Secp256k1.Scalar {
        let raw = try read(32)
        do {
            return nonZero ? try Secp256k1.Scalar(nonZeroBytes: raw) : try Secp256k1.Scalar(bytes: raw)
        } catch { throw malformed }
    }

    /// A secp256k1 point (33-byte compressed; never the identity).
    public mutating func readSecp256k1Point() throws(ProtocolError) -> Secp256k1.Point {
        let raw = try read(33)
        do { return try Secp256k1.Point(compressed: raw) } catch { throw malformed }
    }

    /// An Ed25519 scalar (32 bytes little-endian, canonical).
    public mutating func readEd25519Scalar(nonZero: Bool = false) throws(ProtocolError) -> Ed25519.Scalar {
        let raw = try read(32)
        do {
            return nonZero ? try Ed25519.Scalar(nonZeroBytes: raw) : try Ed25519.Scalar(bytes: raw)
        } catch { throw malformed }
    }

    /// An Ed25519 point of the prime-order subgroup (never the identity unless allowed).
    public mutating func readEd25519Point(allowingIdentity: Bool = false) throws(ProtocolError) -> Ed25519.Point {
        let raw = try read(32)
        do { return try Ed25519.Point(bytes: raw, allowingIdentity: allowingIdentity) } catch { throw malformed }
    }

    /// Succeeds only if every byte was consumed.
    public func finish() throws(ProtocolError) {
        guard remaining == 0 else { throw malformed }
    }
}

/// Builds protocol messages in the fixed field order of the specifications.
public struct ByteWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    public mutating func append<Bytes: Sequence<UInt8>>(_ data: Bytes) { bytes.append(contentsOf: data) }

    public mutating func append(uint8 value: UInt8) { bytes.append(value) }

    public mutating func append(uint16 value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    public mutating func append(uint32 value: UInt32) {
        DomainHash.appendUInt32(value, to: &bytes)
    }

    public mutating func append(_ scalar: Secp256k1.Scalar) { bytes.append(contentsOf: scalar.bytes) }

    /// Appends the compressed encoding; the identity has none: `Abort(–, identityPoint)`.
    public mutating func append(_ point: Secp256k1.Point) throws(ProtocolError) {
        guard let encoded = try? point.compressed() else { throw .abort(party: nil, reason: .identityPoint) }
        bytes.append(contentsOf: encoded)
    }

    public mutating func append(_ scalar: Ed25519.Scalar) { bytes.append(contentsOf: scalar.bytes) }

    public mutating func append(_ point: Ed25519.Point) { bytes.append(contentsOf: point.bytes) }
}
