/// Domain-separated, length-prefixed hashing (DKLs23 spec §5), generic over the protocol label.
///
/// ```
/// lp(b)              = u32(len(b)) ‖ b
/// frame(tag; f1..fk) = lp(protocol) ‖ lp(tag) ‖ u32(k) ‖ lp(f1) ‖ … ‖ lp(fk)
/// ```
/// Every field is length-prefixed, so no two different (tag, fields) lists frame to the same bytes.
/// SHA-256 and SHA-512 are modelled as random oracles.
public struct DomainHash: Sendable {
    /// The protocol label that starts every frame, e.g. "SilentShard-DKLs23-v1".
    public let protocolLabel: [UInt8]

    public init(protocolLabel: String) {
        self.protocolLabel = Array(protocolLabel.utf8)
    }

    /// The framed bytes for a tag and fields.
    public func frame(_ tag: String, _ fields: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(protocolLabel.count + tag.utf8.count + 12 + fields.reduce(0) { $0 + $1.count + 4 })
        Self.appendLengthPrefixed(protocolLabel, to: &out)
        Self.appendLengthPrefixed(Array(tag.utf8), to: &out)
        Self.appendUInt32(UInt32(fields.count), to: &out)
        for field in fields { Self.appendLengthPrefixed(field, to: &out) }
        return out
    }

    /// The constant start of every frame for `tag` with `fieldCount` fields: lp(protocol) ‖ lp(tag) ‖
    /// u32(k). Hot loops feed it to a `SHA2Context`, followed by each field as u32(len) ‖ bytes.
    public func frameHeader(_ tag: String, fieldCount: Int) -> [UInt8] {
        var out: [UInt8] = []
        Self.appendLengthPrefixed(protocolLabel, to: &out)
        Self.appendLengthPrefixed(Array(tag.utf8), to: &out)
        Self.appendUInt32(UInt32(fieldCount), to: &out)
        return out
    }

    /// H: SHA-256 of the frame (32 bytes).
    public func hash(_ tag: String, _ fields: [UInt8]...) -> [UInt8] {
        SHA256.hash(frame(tag, fields))
    }

    /// H: SHA-256 of the frame (32 bytes), fields as an array.
    public func hash(_ tag: String, fields: [[UInt8]]) -> [UInt8] {
        SHA256.hash(frame(tag, fields))
    }

    /// H512: SHA-512 of the frame (64 bytes).
    public func hash512(_ tag: String, fields: [[UInt8]]) -> [UInt8] {
        SHA512.hash(frame(tag, fields))
    }

    /// Hq: the SHA-512 of the frame read big-endian and reduced modulo the secp256k1 order.
    public func hashToScalar(_ tag: String, fields: [[UInt8]]) -> Secp256k1.Scalar {
        // A 64-byte input always reduces.
        (try? Secp256k1.Scalar(reducingWide: hash512(tag, fields: fields))) ?? .zero
    }

    /// PRG(seed, label, L): the first L bytes of H("prg"; seed, label, u32(0)) ‖ H("prg"; seed, label, u32(1)) ‖ …
    /// (SHA-256 in counter mode, a PRF in the seed).
    public func prg(seed: [UInt8], label: [UInt8], count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 32)
        var counter: UInt32 = 0
        while out.count < count {
            var counterBytes: [UInt8] = []
            Self.appendUInt32(counter, to: &counterBytes)
            out.append(contentsOf: hash("prg", fields: [seed, label, counterBytes]))
            counter += 1
        }
        return Array(out.prefix(count))
    }

    /// Appends a big-endian u32.
    public static func appendUInt32(_ value: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value >> 24))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value))
    }

    static func appendLengthPrefixed(_ bytes: [UInt8], to out: inout [UInt8]) {
        appendUInt32(UInt32(bytes.count), to: &out)
        out.append(contentsOf: bytes)
    }
}
