import MPCCrypto

/// The hash functions of the DKLs23 spec §5, all framed under the label "SilentShard-DKLs23-v1".
///
/// Assumptions: SHA-256 and SHA-512 behave as random oracles; PRG is SHA-256 in counter mode (a PRF in
/// the seed); the OT extension's correlation-robust hash is `HqC("ote/out-c"; …)` (a compact frame).
enum DKLsHash {
    static let domain = DomainHash(protocolLabel: "SilentShard-DKLs23-v1")

    /// H(tag; fields): 32 bytes.
    static func h(_ tag: String, _ fields: [UInt8]...) -> [UInt8] {
        domain.hash(tag, fields: fields)
    }

    /// H512(tag; fields): 64 bytes.
    static func h512(_ tag: String, _ fields: [UInt8]...) -> [UInt8] {
        domain.hash512(tag, fields: fields)
    }

    /// Hq(tag; fields): a scalar by wide reduction.
    static func hq(_ tag: String, _ fields: [UInt8]...) -> Secp256k1.Scalar {
        domain.hashToScalar(tag, fields: fields)
    }

    /// The compact-frame tag of the OT output hash OTout (dkls23.md §5, §9.4).
    static let otOutputTag = "ote/out-c"

    /// The constant start of a compact frame (dkls23.md §5): u8(0xFF) ‖ u8(len(label)) ‖ label ‖ u8(len(tag)) ‖ tag.
    /// The fields follow raw, each with the fixed length its tag's registry row gives, so one tag's compact
    /// frames decode uniquely. No compact frame equals a `frame(…)`: those start with u32(21) = 0x00000015.
    static func compactHeader(_ tag: String) -> [UInt8] {
        let label = domain.protocolLabel, tagBytes = Array(tag.utf8)
        return [0xFF, UInt8(truncatingIfNeeded: label.count)] + label + [UInt8(truncatingIfNeeded: tagBytes.count)] + tagBytes
    }

    /// HqC(tag; fields) = int_BE(SHA-512(compactHeader(tag) ‖ f1 ‖ … ‖ fk)) mod q (wide reduction). For
    /// fixed-length fields only (the caller's tag defines the lengths).
    static func hqCompact(_ tag: String, _ fields: [UInt8]...) -> Secp256k1.Scalar {
        // A 64-byte digest always reduces.
        (try? Secp256k1.Scalar(reducingWide: SHA512.hash(compactHeader(tag) + fields.flatMap { $0 }))) ?? .zero
    }

    /// PRG(seed, label, count).
    static func prg(seed: [UInt8], label: [UInt8], count: Int) -> [UInt8] {
        domain.prg(seed: seed, label: label, count: count)
    }

    /// H2C(tag, msg): try-and-increment onto the even-y point with x = H(tag; msg, u32(c)).
    /// Variable time: only ever applied to public inputs.
    static func hashToCurve(_ tag: String, _ message: [UInt8]) throws(ProtocolError) -> Secp256k1.Point {
        for counter in UInt32(0)..<256 {
            let x = h(tag, message, u32(counter))
            if let point = try? Secp256k1.Point(compressed: [0x02] + x) { return point }
        }
        throw .abort(party: nil, reason: .identityPoint)
    }

    /// H2Cu(tag, msg) (protocol v3, the POPF of dkls23.md §8): for c = 0, 1, …: d = H512(tag; msg, u32(c));
    /// the candidate is (0x02 + (d[32] & 1)) ‖ d[0..<32], so the parity of y comes from the hash and the
    /// result is uniform in G (not only the even-y half). Returns the point and the number of tries.
    /// Variable time in its input: callers make the input, or the set of inputs hashed, public.
    static func hashToCurveUniform(_ tag: String, _ message: [UInt8]) throws(ProtocolError) -> (point: Secp256k1.Point, tries: Int) {
        for counter in UInt32(0)..<256 {
            let d = h512(tag, message, u32(counter))
            if let point = try? Secp256k1.Point(compressed: [0x02 | (d[32] & 1)] + d[0..<32]) { return (point, Int(counter) + 1) }
        }
        throw .abort(party: nil, reason: .identityPoint)
    }

    static func u8(_ value: UInt8) -> [UInt8] { [value] }

    static func u32(_ value: UInt32) -> [UInt8] {
        var out: [UInt8] = []
        DomainHash.appendUInt32(value, to: &out)
        return out
    }

    /// enc(S) = u8(#S) ‖ indices ascending.
    static func encode(set: [PartyIndex]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: set.count)] + set.sorted()
    }

    /// enc(P) for a point that is never the identity by construction; the identity aborts.
    static func enc(_ point: Secp256k1.Point) throws(ProtocolError) -> [UInt8] {
        guard let bytes = try? point.compressed() else { throw .abort(party: nil, reason: .identityPoint) }
        return bytes
    }

    /// The concatenated encodings of several points.
    static func enc(_ points: [Secp256k1.Point]) throws(ProtocolError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(33 * points.count)
        for point in points { out += try enc(point) }
        return out
    }
}
