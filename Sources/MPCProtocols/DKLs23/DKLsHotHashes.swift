import MPCCrypto

/// The two hashes the OT extension calls thousands of times per signature, computed with a reused
/// SHA-2 context and no intermediate arrays. Byte-for-byte the same as `DKLsHash.prg` and
/// `SoftSpokenOT.output` (the spec's known answers test both paths).
final class PRGHasher {
    private let context = SHA2Context(SHA256.self)
    private let header = DKLsHash.domain.frameHeader("prg", fieldCount: 3)
    private var frame: [UInt8] = []

    /// PRG(seed, label, count), appended to `output`. The frame is built once per call and only the
    /// counter is patched per block. `startingCounter` > 0 produces the stream from byte
    /// 32 · startingCounter on (to compute disjoint parts of one stream in parallel).
    func append(seed: [UInt8], label: [UInt8], count: Int, startingCounter: UInt32 = 0, to output: inout [UInt8]) {
        frame.removeAll(keepingCapacity: true)
        frame += header
        DomainHash.appendUInt32(UInt32(seed.count), to: &frame)
        frame += seed
        DomainHash.appendUInt32(UInt32(label.count), to: &frame)
        frame += label
        DomainHash.appendUInt32(4, to: &frame)
        let counterOffset = frame.count
        frame += [0, 0, 0, 0]
        let target = output.count + count
        var counter = startingCounter
        // Every block's input shares the frame up to the counter: its whole SHA-256 blocks are
        // compressed once and each counter value costs only the remaining block(s).
        let sharedPrefix = counterOffset - counterOffset % context.blockByteCount
        context.reset()
        frame.withUnsafeBytes { raw in context.update(UnsafeRawBufferPointer(rebasing: raw[..<sharedPrefix])) }
        context.saveMidstate()
        withUnsafeTemporaryAllocation(byteCount: 32, alignment: 8) { digest in
            while output.count < target {
                context.resetToMidstate()
                frame.withUnsafeMutableBytes { raw in
                    raw.storeBytes(of: counter.bigEndian, toByteOffset: counterOffset, as: UInt32.self)
                    context.update(UnsafeRawBufferPointer(rebasing: raw[sharedPrefix...]))
                }
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

/// OTout(col) = (HqC("ote/out-c"; out_id, u32(j), u8(k), gf(col)))_{k = 0,1,2} for one out_id (dkls23.md
/// §9.4). The 102-byte compact frame fits one SHA-512 block; it is kept in one buffer whose variable fields
/// are patched in place: one update and one compression per digest.
final class OTOutputHasher {
    private let context = SHA2Context(SHA512.self)
    private var frame: [UInt8]
    private let indexOffset: Int
    private let branchOffset: Int
    private let columnOffset: Int

    init(outId: [UInt8]) {
        var frame = DKLsHash.compactHeader(DKLsHash.otOutputTag)
        frame += outId
        indexOffset = frame.count
        frame += [0, 0, 0, 0]
        branchOffset = frame.count
        frame.append(0)
        columnOffset = frame.count
        frame += [UInt8](repeating: 0, count: 32)
        self.frame = frame
    }

    func output(index: Int, column: GF256) -> (Secp256k1.Scalar, Secp256k1.Scalar, Secp256k1.Scalar) {
        let indexOffset = indexOffset, branchOffset = branchOffset, columnOffset = columnOffset
        frame.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: UInt32(truncatingIfNeeded: index).bigEndian, toByteOffset: indexOffset, as: UInt32.self)
            raw.storeBytes(of: column.l0.littleEndian, toByteOffset: columnOffset, as: UInt64.self)
            raw.storeBytes(of: column.l1.littleEndian, toByteOffset: columnOffset + 8, as: UInt64.self)
            raw.storeBytes(of: column.l2.littleEndian, toByteOffset: columnOffset + 16, as: UInt64.self)
            raw.storeBytes(of: column.l3.littleEndian, toByteOffset: columnOffset + 24, as: UInt64.self)
        }
        return withUnsafeTemporaryAllocation(byteCount: 64, alignment: 8) { digest in
            func hq(_ k: UInt8) -> Secp256k1.Scalar {
                frame[branchOffset] = k
                frame.withUnsafeBytes { context.update($0) }
                context.finalize(into: digest)
                // A 64-byte digest always reduces.
                return (try? Secp256k1.Scalar(reducingWide: UnsafeRawBufferPointer(digest))) ?? .zero
            }
            return (hq(0), hq(1), hq(2))
        }
    }
}
