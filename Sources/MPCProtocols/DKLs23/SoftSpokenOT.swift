import MPCCrypto

/// SoftSpokenOT (Roy, CRYPTO 2022, ePrint 2022/192) with k-bit blocks in the random-oracle model,
/// one message from the receiver (dkls23.md §9).
///
/// The receiver (RVOLE's Bob) holds all 2^k leaf seeds of λc/k GGM trees; the sender (RVOLE's Alice)
/// holds Δ and every leaf except leaf Δ_i of tree i. One batch extends m′ = 896 OTs (512 used, 384
/// padding) with a 7,232-byte message, and leaves the same correlation as KOS: q_j = t_j ⊕ x_j·Δ.
enum SoftSpokenOT {
    /// k: bits of Δ per block (dkls23.md §9.1 table).
    static let blockBits = 4
    static let blockCount = 256 / blockBits
    static let leafCount = 1 << blockBits
    static let columnCount = 896
    static let usedColumns = 512
    static let rowBytes = columnCount / 8
    static let matrixBytes = blockCount * rowBytes
    static let messageSize = matrixBytes + 64
    /// Bob's GGM corrections toward one Alice (sent with the base-OT message 2, dkls23.md §12.3).
    static let correctionSize = blockCount * GGMTree.correctionSize

    /// Bob's stored setup toward one peer: one GGM root per block; `leaves[i][x]` is the cached expansion.
    struct ReceiverSetup: Sendable, Equatable {
        let roots: [[UInt8]]
        let leaves: [[[UInt8]]]

        init(roots: [[UInt8]]) {
            self.roots = roots
            leaves = roots.map { GGMTree.expand(root: $0)[GGMTree.depth] }
        }

        /// Fresh roots from the RNG.
        static func random<R: RandomNumberGenerator>(using rng: inout R) -> ReceiverSetup {
            ReceiverSetup(roots: (0..<blockCount).map { _ in rng.randomBytes(count: GGMTree.seedSize) })
        }

        /// The corrections (dkls23.md §8.1) for the base-OT keys (K_{b,0}, K_{b,1}), b = k·i + l.
        func corrections(zeroKeys: [[UInt8]], oneKeys: [[UInt8]]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(correctionSize)
            for (i, root) in roots.enumerated() {
                let range = (blockBits * i)..<(blockBits * (i + 1))
                out += GGMTree.corrections(levels: GGMTree.expand(root: root), zeroKeys: zeroKeys[range], oneKeys: oneKeys[range])
            }
            return out
        }
    }

    /// Alice's stored setup toward one peer: Δ (32 bytes, LSB-first; block i = bits k·i … k·i + k − 1)
    /// and the co-path of every punctured tree (k seeds per block, block-major); `leaves` is the cache.
    struct SenderSetup: Sendable, Equatable {
        let delta: [UInt8]
        let coPath: [[UInt8]]
        let leaves: [[[UInt8]]]

        init(delta: [UInt8], coPath: [[UInt8]]) {
            self.delta = delta
            self.coPath = coPath
            leaves = (0..<blockCount).map { i in
                GGMTree.puncturedLeaves(choices: blockChoices(delta, block: i),
                                        coPath: coPath[(blockBits * i)..<(blockBits * (i + 1))])
            }
        }

        /// From Bob's corrections and the base-OT keys K_{b,Δ_b}: a correction of the wrong length is
        /// Abort(Bob). Wrong corrections are not detectable here; they fail the check at signing.
        init(delta: [UInt8], corrections: [UInt8], chosenKeys: [[UInt8]], from bob: PartyIndex) throws(ProtocolError) {
            guard corrections.count == correctionSize, chosenKeys.count == 256, delta.count == 32 else {
                throw .abort(party: bob, reason: .malformedMessage)
            }
            var coPath: [[UInt8]] = []
            coPath.reserveCapacity(256)
            for i in 0..<blockCount {
                let start = i * GGMTree.correctionSize
                coPath += GGMTree.coPath(choices: blockChoices(delta, block: i),
                                         correction: corrections[start..<(start + GGMTree.correctionSize)],
                                         keys: chosenKeys[(blockBits * i)..<(blockBits * (i + 1))])
            }
            self.init(delta: delta, coPath: coPath)
        }
    }

    /// Δ_i as k bits (0/1 each).
    static func blockChoices(_ delta: [UInt8], block i: Int) -> [UInt64] {
        (0..<blockBits).map { Bits.bit(delta, blockBits * i + $0) }
    }

    /// χ_j for j ∈ [0, m′): PRG(H("ote/U"; prg_id, û), "ote/chi", 32·m′) cut into GF(2^256) elements.
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

    /// r_{i,x} = PRG(s_{i,x}, prg_id, m′/8) for every leaf x of one tree, folded into the per-level
    /// sums A_l^b = ⊕_{x: x_l = b} r_{i,x} (`sums[2·l + b]`). x is public: no secret-dependent branch.
    static func levelSums(leaves: [[UInt8]], prgId: [UInt8], prg: PRGHasher) -> [[UInt8]] {
        var sums = [[UInt8]](repeating: [UInt8](repeating: 0, count: rowBytes), count: 2 * blockBits)
        var r: [UInt8] = []
        r.reserveCapacity(rowBytes)
        for (x, leaf) in leaves.enumerated() {
            r.removeAll(keepingCapacity: true)
            prg.append(seed: leaf, label: prgId, count: rowBytes, to: &r)
            for l in 0..<blockBits {
                let slot = 2 * l + ((x >> l) & 1)
                sums[slot].withUnsafeMutableBufferPointer { sum in
                    for k in 0..<rowBytes { sum[k] ^= r[k] }
                }
            }
        }
        return sums
    }

    /// A test-only cheat (debug builds): Bob flips column 0's choice bit in block `block` of û and
    /// corrects t̃ as if Δ_block were `guess`; the check passes exactly when the guess is right.
    struct Cheat: Sendable {
        let block: Int
        let guess: UInt8

        /// χ_0 ⊗ (the guess placed in the block's bits of Δ): what an honest t̃ misses after the flip.
        func correction(chi0: GF256) -> GF256 {
            var guessed = [UInt8](repeating: 0, count: 32)
            for l in 0..<blockBits where (guess >> UInt8(l)) & 1 == 1 {
                let b = blockBits * block + l
                guessed[b >> 3] |= 1 << UInt8(b & 7)
            }
            return GF256.multiply(publicFactor: chi0, secret: GF256(littleEndian: guessed))
        }
    }

    /// Receiver (Bob) with 512 choice bits (64 bytes, LSB-first): returns t_j for the used columns and
    /// the message û ‖ x̃ ‖ t̃ (dkls23.md §9.3).
    static func receive<R: RandomNumberGenerator>(setup: ReceiverSetup, prgId: [UInt8], choices: [UInt8],
                                                  using rng: inout R, cheat: Cheat? = nil) -> (columns: [GF256], message: [UInt8]) {
        let extended = choices + rng.randomBytes(count: (columnCount - usedColumns) / 8)   // x = β ‖ padding
        return receive(setup: setup, prgId: prgId, extended: extended, cheat: cheat)
    }

    /// The receiver with all m′ choice bits x given (112 bytes; known-answer tests fix the padding).
    static func receive(setup: ReceiverSetup, prgId: [UInt8], extended: [UInt8],
                        cheat: Cheat? = nil) -> (columns: [GF256], message: [UInt8]) {
        let chunks = ChunkedParallelism.map(count: blockCount, minimumChunk: 8) { blocks -> (message: [UInt8], rows: [[UInt8]]) in
            let prg = PRGHasher()
            var message: [UInt8] = []
            message.reserveCapacity(blocks.count * rowBytes)
            var rows: [[UInt8]] = []
            rows.reserveCapacity(blocks.count * blockBits)
            for i in blocks {
                let sums = levelSums(leaves: setup.leaves[i], prgId: prgId, prg: prg)
                // u_i = A_0^0 ⊕ A_0^1 (all leaves); v_i row l = A_l^1.
                #if DEBUG
                let flip: UInt8 = i == cheat?.block ? 1 : 0
                #else
                let flip: UInt8 = 0   // the cheating hook exists in debug (test) builds only
                #endif
                message.append(sums[0][0] ^ sums[1][0] ^ extended[0] ^ flip)
                for k in 1..<rowBytes { message.append(sums[0][k] ^ sums[1][k] ^ extended[k]) }
                for l in 0..<blockBits { rows.append(sums[2 * l + 1]) }
            }
            return (message, rows)
        }
        var message: [UInt8] = []
        message.reserveCapacity(messageSize)
        var rows: [[UInt8]] = []
        rows.reserveCapacity(256)
        for chunk in chunks {
            message += chunk.message
            rows += chunk.rows
        }
        let t = Bits.columns(ofRows: rows, columnCount: columnCount)
        let chi = challenges(prgId: prgId, matrix: message[...])
        var xTilde = GF256.zero
        var tTilde = GF256.ProductAccumulator()
        for j in 0..<columnCount {
            xTilde ^= chi[j].masked(by: Bits.bit(extended, j))
            tTilde.add(publicFactor: chi[j], secret: t[j])
        }
        #if DEBUG
        let tTildeValue = tTilde.reduced() ^ (cheat.map { $0.correction(chi0: chi[0]) } ?? .zero)
        #else
        let tTildeValue = tTilde.reduced()
        #endif
        message.append(contentsOf: xTilde.bytes)
        message.append(contentsOf: tTildeValue.bytes)
        return (Array(t[0..<usedColumns]), message)
    }

    /// Sender (Alice): checks Bob's message and returns q_j for the used columns. A failed consistency
    /// check is AbortAndBan(Bob): its outcome depends on Δ. Constant time in Δ: the punctured leaf is
    /// expanded like the others and enters only sums whose coefficient is 0.
    static func send(setup: SenderSetup, prgId: [UInt8], message: [UInt8], from bob: PartyIndex) throws(ProtocolError) -> [GF256] {
        guard message.count == messageSize else { throw .abort(party: bob, reason: .malformedMessage) }
        let rows = ChunkedParallelism.map(count: blockCount, minimumChunk: 8) { blocks -> [[UInt8]] in
            let prg = PRGHasher()
            var rows: [[UInt8]] = []
            rows.reserveCapacity(blocks.count * blockBits)
            for i in blocks {
                let sums = levelSums(leaves: setup.leaves[i], prgId: prgId, prg: prg)
                let offset = i * rowBytes
                for l in 0..<blockBits {
                    // w row l = Δ_l·A_l^0 ⊕ (1 − Δ_l)·A_l^1 ⊕ Δ_l·û_i: the punctured leaf x = Δ_i lies in
                    // A_l^{Δ_l}, which is never selected.
                    let d = Bits.bit(setup.delta, blockBits * i + l)
                    let mask = UInt8(truncatingIfNeeded: 0 &- d)
                    var row = Bits.select(sums[2 * l], sums[2 * l + 1], bit: d)
                    for k in 0..<rowBytes { row[k] ^= message[offset + k] & mask }
                    rows.append(row)
                }
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
