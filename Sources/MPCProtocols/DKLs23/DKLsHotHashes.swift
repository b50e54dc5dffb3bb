import MPCCrypto

/// The two hashes the OT extension calls thousands of times per signature, computed with a reused
/// SHA-2 context and no intermediate arrays. Byte-for-byte the same as `DKLsHash.prg` and
/// `DKLsHash.hq("ote/out"; …)` (the spec's known answers test both paths).
final class PRGHasher {
    private let context = SHA2Context(SHA256.self)
    private let header = DKLsHash.domain.frameHeader("prg", fieldCount: 3)

    /// PRG(seed, label, count), appended to `output`.
    func append(seed: [UInt8], label: [UInt8], count: Int, to output: inout [UInt8]) {
        let target = output.count + count
        var counter: UInt32 = 0
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            while output.count < target {
                context.update(header)
                context.update(uint32: UInt32(seed.count))
                context.update(seed)
                context.update(uint32: UInt32(label.count))
                context.update(label)
                context.update(uint32: 4)
                context.update(uint32: counter)
                context.finalize(into: digest)
                output.append(contentsOf: digest.prefix(min(32, target - output.count)))
                counter += 1
            }
        }
    }

    func bytes(seed: [UInt8], label: [UInt8], count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        append(seed: seed, label: label, count: count, to: &out)
        return out
    }
}

/// OTout(col) = (Hq("ote/out"; out_id, u32(j), u8(k), gf(col)))_{k = 0,1,2} for one out_id.
final class OTOutputHasher {
    private let context = SHA2Context(SHA512.self)
    private let prefix: [UInt8]

    init(outId: [UInt8]) {
        var prefix = DKLsHash.domain.frameHeader("ote/out", fieldCount: 4)
        DomainHash.appendUInt32(UInt32(outId.count), to: &prefix)
        prefix += outId
        self.prefix = prefix
    }

    func output(index: Int, column: GF256) -> (Secp256k1.Scalar, Secp256k1.Scalar, Secp256k1.Scalar) {
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 8) { digest in
            func hq(_ k: UInt8) -> Secp256k1.Scalar {
                context.update(prefix)
                context.update(uint32: 4)
                context.update(uint32: UInt32(index))
                context.update(uint32: 1)
                context.update(uint8: k)
                context.update(uint32: 32)
                withUnsafeBytes(of: column.l0.littleEndian) { context.update($0) }
                withUnsafeBytes(of: column.l1.littleEndian) { context.update($0) }
                withUnsafeBytes(of: column.l2.littleEndian) { context.update($0) }
                withUnsafeBytes(of: column.l3.littleEndian) { context.update($0) }
                context.finalize(into: digest)
                // A 64-byte digest always reduces.
                return (try? Secp256k1.Scalar(reducingWide: UnsafeRawBufferPointer(digest))) ?? .zero
            }
            return (hq(0), hq(1), hq(2))
        }
    }
}
