import MPCCrypto

/// KOS15 OT extension in the random-oracle model, one message from the receiver (DKLs23 spec §9).
///
/// The receiver (RVOLE's Bob) holds both base-OT seeds per row; the sender (RVOLE's Alice) holds Δ and
/// the seed Δ selected. One batch extends m′ = 896 OTs (512 used, 384 padding) with a 28,736-byte message.
enum KOS {
    static let rowCount = 256
    static let columnCount = 896
    static let usedColumns = 512
    static let rowBytes = columnCount / 8
    static let matrixBytes = rowCount * rowBytes
    static let messageSize = matrixBytes + 64

    /// Bob's stored setup toward one peer: both seeds of every base OT.
    struct ReceiverSetup: Sendable, Equatable {
        let zeroSeeds: [[UInt8]]
        let oneSeeds: [[UInt8]]
    }

    /// Alice's stored setup toward one peer: Δ (32 bytes, LSB-first) and the seeds Δ selected.
    struct SenderSetup: Sendable, Equatable {
        let delta: [UInt8]
        let chosenSeeds: [[UInt8]]
    }

    /// χ_j for j ∈ [0, m′): PRG(H("ote/U"; prg_id, U), "ote/chi", 32·m′) cut into GF(2^256) elements.
    /// Each χ_j is exactly PRG block j, so chunks of j are computed in parallel.
    static func challenges(prgId: [UInt8], matrix: ArraySlice<UInt8>) -> [GF256] {
        let seed = DKLsHash.h("ote/U", prgId, Array(matrix))
        let label = Array("ote/chi".utf8)
        return ChunkedParallelism.map(count: columnCount, minimumChunk: 128) { range -> [GF256] in
            var stream: [UInt8] = []
            stream.reserveCapacity(32 * range.count)
            PRGHasher().append(seed: seed, label: label, count: 32 * range.count,
                               startingCounter: UInt32(range.lowerBound), to: &stream)
            return (0..<range.count).map { GF256(littleEndian: stream[(32 * $0)..<(32 * $0 + 32)]) }
        }.flatMap { $0 }
    }

    /// Receiver (Bob) with 512 choice bits (64 bytes, LSB-first): returns t_j for the used columns and
    /// the message U ‖ x̃ ‖ t̃.
    /// `cheatingRow` (tests only) makes a malicious receiver: that row of U uses a different choice
    /// bit for column 0 while x̃ and t̃ are computed for the honest choices.
    static func receive<R: RandomNumberGenerator>(setup: ReceiverSetup, prgId: [UInt8], choices: [UInt8],
                                                  using rng: inout R, cheatingRow: Int? = nil) -> (columns: [GF256], message: [UInt8]) {
        let extended = choices + rng.randomBytes(count: (columnCount - usedColumns) / 8)   // x
        var message: [UInt8] = []
        message.reserveCapacity(messageSize)
        var zeroRows: [[UInt8]] = []
        zeroRows.reserveCapacity(rowCount)
        let chunks = ChunkedParallelism.map(count: rowCount, minimumChunk: 32) { rows -> (message: [UInt8], zeroRows: [[UInt8]]) in
            let prg = PRGHasher()
            var message: [UInt8] = []
            message.reserveCapacity(rows.count * rowBytes)
            var zeroRows: [[UInt8]] = []
            zeroRows.reserveCapacity(rows.count)
            for b in rows {
                let t0 = prg.bytes(seed: setup.zeroSeeds[b], label: prgId, count: rowBytes)
                let t1 = prg.bytes(seed: setup.oneSeeds[b], label: prgId, count: rowBytes)
                #if DEBUG
                let flip: UInt8 = b == cheatingRow ? 1 : 0
                #else
                let flip: UInt8 = 0   // the cheating hook exists in debug (test) builds only
                #endif
                message.append(t0[0] ^ t1[0] ^ extended[0] ^ flip)
                for k in 1..<rowBytes { message.append(t0[k] ^ t1[k] ^ extended[k]) }
                zeroRows.append(t0)
            }
            return (message, zeroRows)
        }
        for chunk in chunks {
            message += chunk.message
            zeroRows += chunk.zeroRows
        }
        let t = Bits.columns(ofRows: zeroRows, columnCount: columnCount)
        let chi = challenges(prgId: prgId, matrix: message[...])
        var xTilde = GF256.zero
        var tTilde = GF256.ProductAccumulator()
        for j in 0..<columnCount {
            xTilde ^= chi[j].masked(by: Bits.bit(extended, j))
            tTilde.add(publicFactor: chi[j], secret: t[j])
        }
        message.append(contentsOf: xTilde.bytes)
        message.append(contentsOf: tTilde.reduced().bytes)
        return (Array(t[0..<usedColumns]), message)
    }

    /// Sender (Alice): checks Bob's message and returns q_j for the used columns. A failed consistency
    /// check is AbortAndBan(Bob): its outcome depends on Δ.
    static func send(setup: SenderSetup, prgId: [UInt8], message: [UInt8], from bob: PartyIndex) throws(ProtocolError) -> [GF256] {
        guard message.count == messageSize else { throw .abort(party: bob, reason: .malformedMessage) }
        let rows = ChunkedParallelism.map(count: rowCount, minimumChunk: 32) { range -> [[UInt8]] in
            let prg = PRGHasher()
            var rows: [[UInt8]] = []
            rows.reserveCapacity(range.count)
            for b in range {
                let seeded = prg.bytes(seed: setup.chosenSeeds[b], label: prgId, count: rowBytes)
                let mask = UInt8(truncatingIfNeeded: 0 &- Bits.bit(setup.delta, b))
                var row = seeded
                let offset = b * rowBytes
                for k in 0..<rowBytes { row[k] ^= message[offset + k] & mask }
                rows.append(row)
            }
            return rows
        }.flatMap { $0 }
        let q = Bits.columns(ofRows: rows, columnCount: columnCount)
        let chi = challenges(prgId: prgId, matrix: message[0..<matrixBytes])
        var accumulator = GF256.ProductAccumulator()
        for j in 0..<columnCount { accumulator.add(publicFactor: chi[j], secret: q[j]) }
        let qTilde = accumulator.reduced()
        let xTilde = GF256(littleEndian: message[matrixBytes..<(matrixBytes + 32)])
        let tTilde = GF256(littleEndian: message[(matrixBytes + 32)..<(matrixBytes + 64)])
        let delta = GF256(littleEndian: setup.delta)
        let expected = tTilde ^ GF256.multiply(publicFactor: xTilde, secret: delta)
        guard Bits.equal(qTilde.bytes, expected.bytes) else {
            throw .abortAndBan(party: bob, reason: .otConsistencyCheckFailed)
        }
        return Array(q[0..<usedColumns])
    }

    /// OTout(col) = (HqC("ote/out-c"; out_id, u32(j), u8(k), gf(col)))_{k=0,1,2} (dkls23.md §9.4).
    /// Hot loops use `OTOutputHasher` directly; this is the plain definition.
    static func output(outId: [UInt8], index: Int, column: GF256) -> [Secp256k1.Scalar] {
        let j = DKLsHash.u32(UInt32(index))
        let encoded = column.bytes
        return (0..<3).map { DKLsHash.hqCompact(DKLsHash.otOutputTag, outId, j, [UInt8($0)], encoded) }
    }
}
