import MPCCrypto

/// SoftSpokenOT (Roy, CRYPTO 2022, ePrint 2022/192) with k-bit blocks in the random-oracle model,
/// one message from the receiver (dkls23.md §9).
///
/// The receiver (RVOLE's Bob) holds all 2^k leaf seeds of λc/k GGM trees; the sender (RVOLE's Alice)
/// holds Δ and every leaf except leaf Δ_i of tree i. One batch extends m′ = 640 OTs (512 used, one
/// 128-bit mask chunk) with a 9,232-byte message, and leaves the same correlation as KOS:
/// q_j = t_j ⊕ x_j·Δ. Protocol v3 checks it row by row (revised KOS Fig. 10 layout, dkls23.md §9.3).
enum SoftSpokenOT {
    /// k: bits of Δ per block (dkls23.md §9.1 table).
    static let blockBits = 4
    static let blockCount = 256 / blockBits
    static let leafCount = 1 << blockBits
    static let usedColumns = 512
    /// The check's mask chunk: 128 fresh random choice bits after β (dkls23.md §9.3).
    static let maskBits = 128
    static let columnCount = usedColumns + maskBits
    /// GF(2^128) challenges of the per-row check: one per 128-bit chunk of β.
    static let challengeCount = usedColumns / 128
    static let rowBytes = columnCount / 8
    static let matrixBytes = blockCount * rowBytes
    /// û ‖ x̃ ‖ t̃_0 … t̃_255.
    static let messageSize = matrixBytes + 16 + 256 * 16
    /// Bob's GGM corrections toward one Alice (sent with the base-OT message 2, dkls23.md §12.3).
    /// = the GGM corrections (64 × 256 bytes) ‖ the PPRF consistency proof (`pprfProofSize`).
    static let correctionSize = blockCount * GGMTree.correctionSize + pprfProofSize
    /// s̃_0 … s̃_63 ‖ t̃ (dkls23.md §8.1, protocol v3).
    static let pprfProofSize = 32 * blockCount + 32

    /// Bob's stored setup toward one peer: one GGM root per block; `leaves[i][x]` is the cached expansion.
    struct ReceiverSetup: Sendable {
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

        /// The corrections (dkls23.md §8.1) for the base-OT keys (K_{b,0}, K_{b,1}), b = k·i + l, followed
        /// by the PPRF consistency proof: s̃_i = ⊕_x g_{i,x} per tree and t̃ = H("ote/pprf-check"; all g),
        /// with g_{i,x} = H("ote/pprf-leaf"; s_{i,x}).
        func corrections(zeroKeys: [[UInt8]], oneKeys: [[UInt8]]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(correctionSize)
            for (i, root) in roots.enumerated() {
                let range = (blockBits * i)..<(blockBits * (i + 1))
                out += GGMTree.corrections(levels: GGMTree.expand(root: root), zeroKeys: zeroKeys[range], oneKeys: oneKeys[range])
            }
            var all: [UInt8] = []
            all.reserveCapacity(32 * leafCount * blockCount)
            for treeLeaves in leaves {
                var sum = [UInt8](repeating: 0, count: 32)
                for leaf in treeLeaves {
                    let g = leafCheckValue(leaf)
                    all += g
                    for k in 0..<32 { sum[k] ^= g[k] }
                }
                out += sum
            }
            out += DKLsHash.h("ote/pprf-check", all)
            return out
        }
    }

    /// Alice's stored setup toward one peer: Δ (32 bytes, LSB-first; block i = bits k·i … k·i + k − 1)
    /// and the co-path of every punctured tree (k seeds per block, block-major); `leaves` is the cache.
    struct SenderSetup: Sendable {
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
        /// Abort(Bob); so is a failed PPRF consistency proof (wrong corrections, dkls23.md §8.1), checked
        /// here, before any keyshare exists.
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
            guard verifiesPPRFProof(corrections[(blockCount * GGMTree.correctionSize)...]) else {
                throw .abort(party: bob, reason: .invalidProof)
            }
        }

        /// The puncturing side of the proof, constant time in Δ: g of all 16 held leaves (the punctured
        /// one is a placeholder), the missing g_{i,Δ_i} = s̃_i ⊕ the 15 others, put in place by masks; then
        /// t̃ is recomputed over every tree and compared once.
        func verifiesPPRFProof(_ proof: ArraySlice<UInt8>) -> Bool {
            var all: [UInt8] = []
            all.reserveCapacity(32 * leafCount * blockCount)
            for i in 0..<blockCount {
                let punctured = blockChoices(delta, block: i).enumerated().reduce(UInt64(0)) { $0 | ($1.element << UInt64($1.offset)) }
                let values = leaves[i].map(leafCheckValue)
                let start = proof.startIndex + 32 * i
                var missing = Array(proof[start..<(start + 32)])
                for (x, g) in values.enumerated() {
                    let isOther = ~GGMTree.equalMask(UInt64(x), punctured)
                    for k in 0..<32 { missing[k] ^= g[k] & isOther }
                }
                for (x, g) in values.enumerated() {
                    let isPunctured = GGMTree.equalMask(UInt64(x), punctured)
                    for k in 0..<32 { all.append((missing[k] & isPunctured) | (g[k] & ~isPunctured)) }
                }
            }
            let tTilde = Array(proof[(proof.startIndex + 32 * blockCount)..<(proof.startIndex + 32 * blockCount + 32)])
            return Bits.equal(DKLsHash.h("ote/pprf-check", all), tTilde)
        }
    }

    /// g = H("ote/pprf-leaf"; leaf seed): a leaf's value in the PPRF proof (separated from the leaf PRG).
    static func leafCheckValue(_ leaf: [UInt8]) -> [UInt8] { DKLsHash.h("ote/pprf-leaf", leaf) }

    /// Δ_i as k bits (0/1 each).
    static func blockChoices(_ delta: [UInt8], block i: Int) -> [UInt64] {
        (0..<blockBits).map { Bits.bit(delta, blockBits * i + $0) }
    }

    /// χ_0 … χ_3 ∈ GF(2^128): H512("ote/chi-row"; prg_id, û) cut into four 16-byte pieces (little-endian).
    /// The Fiat–Shamir challenges of the per-row check (dkls23.md §9.3), fixed by û before Bob's x̃ and t̃.
    static func challenges(prgId: [UInt8], matrix: ArraySlice<UInt8>) -> [GF128] {
        let digest = DKLsHash.h512("ote/chi-row", prgId, Array(matrix))
        return (0..<challengeCount).map { GF128(littleEndian: digest[(16 * $0)..<(16 * $0 + 16)]) }
    }

    /// The check's universal hash of one m′-bit row (80 bytes, LSB-first): the row is cut into five
    /// 128-bit chunks y_0 … y_4 and hashed to Σ_{c<4} χ_c ⊗ y_c ⊕ y_4 (y_4: the mask chunk, coefficient 1).
    /// χ is public; the time does not depend on the row.
    static func rowHash(_ row: [UInt8], challenges chi: [GF128]) -> GF128 {
        var accumulator = GF128.ProductAccumulator()
        for c in 0..<challengeCount {
            accumulator.add(publicFactor: chi[c], secret: GF128(littleEndian: row[(16 * c)..<(16 * c + 16)]))
        }
        accumulator.add(GF128(littleEndian: row[(16 * challengeCount)..<(16 * challengeCount + 16)]))
        return accumulator.reduced()
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

    /// A test-only cheat (debug builds): in every block i of `guesses`, Bob flips column 0's choice bit
    /// in û_i and corrects t̃ of the block's k rows as if Δ_i were `guesses[i]`; the check passes exactly
    /// when every guess is right.
    struct Cheat: Sendable {
        let guesses: [Int: UInt8]

        init(guesses: [Int: UInt8]) { self.guesses = guesses }

        init(block: Int, guess: UInt8) { guesses = [block: guess] }

        /// The flip of û_i's column-0 bit.
        func flip(block i: Int) -> UInt8 { guesses[i] == nil ? 0 : 1 }

        /// The flipped column 0 moves h(x^{(i)}) by χ_0: an honest row r of block i misses Δ_r·χ_0.
        func correction(row r: Int, chi0: GF128) -> GF128 {
            guard let guess = guesses[r / blockBits] else { return .zero }
            return chi0.masked(by: UInt64((guess >> UInt8(r % blockBits)) & 1))
        }
    }

    /// Receiver (Bob) with 512 choice bits (64 bytes, LSB-first): returns t_j for the used columns and
    /// the message û ‖ x̃ ‖ t̃ (dkls23.md §9.3).
    static func receive<R: RandomNumberGenerator>(setup: ReceiverSetup, prgId: [UInt8], choices: [UInt8],
                                                  using rng: inout R, cheat: Cheat? = nil) -> (columns: [GF256], message: [UInt8]) {
        let extended = choices + rng.randomBytes(count: maskBits / 8)   // x = β ‖ mask chunk
        return receive(setup: setup, prgId: prgId, extended: extended, cheat: cheat)
    }

    /// The receiver with all m′ choice bits x given (80 bytes; known-answer tests fix the mask chunk).
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
                let flip: UInt8 = cheat?.flip(block: i) ?? 0
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
        let t = Bits.columns(ofRows: rows, columnCount: usedColumns)
        let chi = challenges(prgId: prgId, matrix: message[...])
        rowHash(extended, challenges: chi).appendBytes(to: &message)                    // x̃
        for (r, row) in rows.enumerated() {
            #if DEBUG
            let tTilde = rowHash(row, challenges: chi) ^ (cheat?.correction(row: r, chi0: chi[0]) ?? .zero)
            #else
            let tTilde = rowHash(row, challenges: chi)
            #endif
            tTilde.appendBytes(to: &message)                                          // t̃_r
        }
        return (t, message)
    }

    /// Sender (Alice): checks Bob's message and returns q_j for the used columns. A failed consistency
    /// check is AbortAndBan(Bob): its outcome depends on Δ. Constant time in Δ: the punctured leaf is
    /// expanded like the others and enters only sums whose coefficient is 0; every row is checked, the
    /// differences are OR-ed and compared once.
    static func send(setup: SenderSetup, prgId: [UInt8], message: [UInt8], from bob: PartyIndex) throws(ProtocolError) -> [GF256] {
        guard message.count == messageSize else { throw .abort(party: bob, reason: .malformedMessage) }
        let rows = senderRows(setup: setup, prgId: prgId, matrix: message[0..<matrixBytes])
        let chi = challenges(prgId: prgId, matrix: message[0..<matrixBytes])
        let xTilde = GF128(littleEndian: message[matrixBytes..<(matrixBytes + 16)])
        var difference = GF128.zero
        for (r, row) in rows.enumerated() {
            // q̃_r == t̃_r ⊕ Δ_r·x̃ for every row r (Δ_r selects x̃ by mask, no branch).
            let start = matrixBytes + 16 + 16 * r
            let tTilde = GF128(littleEndian: message[start..<(start + 16)])
            let residual = rowHash(row, challenges: chi) ^ tTilde ^ xTilde.masked(by: Bits.bit(setup.delta, r))
            difference.l0 |= residual.l0
            difference.l1 |= residual.l1
        }
        guard Bits.equal(difference.bytes, GF128.zero.bytes) else {
            throw .abortAndBan(party: bob, reason: .otConsistencyCheckFailed)
        }
        return Bits.columns(ofRows: rows, columnCount: usedColumns)
    }

    /// Alice's 256 rows of Q (m′ bits each) from û: row k·i + l is
    /// w_{i,l} = Δ_l·A_l^0 ⊕ (1 − Δ_l)·A_l^1 ⊕ Δ_l·û_i (dkls23.md §9.3 step 2).
    static func senderRows(setup: SenderSetup, prgId: [UInt8], matrix: ArraySlice<UInt8>) -> [[UInt8]] {
        let base = matrix.startIndex
        return ChunkedParallelism.map(count: blockCount, minimumChunk: 8) { blocks -> [[UInt8]] in
            let prg = PRGHasher()
            var rows: [[UInt8]] = []
            rows.reserveCapacity(blocks.count * blockBits)
            for i in blocks {
                let sums = levelSums(leaves: setup.leaves[i], prgId: prgId, prg: prg)
                let offset = base + i * rowBytes
                for l in 0..<blockBits {
                    // The punctured leaf x = Δ_i lies in A_l^{Δ_l}, which is never selected.
                    let d = Bits.bit(setup.delta, blockBits * i + l)
                    let mask = UInt8(truncatingIfNeeded: 0 &- d)
                    var row = Bits.select(sums[2 * l], sums[2 * l + 1], bit: d)
                    for k in 0..<rowBytes { row[k] ^= matrix[offset + k] & mask }
                    rows.append(row)
                }
            }
            return rows
        }.flatMap { $0 }
    }

    /// OTout(col) = (HqC("ote/out-c"; out_id, u32(j), u8(k), gf(col)))_{k=0,1,2} (dkls23.md §9.4).
    /// Hot loops use `OTOutputHasher` directly; this is the plain definition.
    static func output(outId: [UInt8], index: Int, column: GF256) -> [Secp256k1.Scalar] {
        let j = DKLsHash.u32(UInt32(index))
        let encoded = column.bytes
        return (0..<3).map { DKLsHash.hqCompact(DKLsHash.otOutputTag, outId, j, [UInt8($0)], encoded) }
    }
}
