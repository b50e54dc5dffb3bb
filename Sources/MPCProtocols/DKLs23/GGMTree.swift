import MPCCrypto

/// The GGM trees of SoftSpokenOT's all-but-one OT layer (dkls23.md §8.1).
///
/// A tree has depth k = `SoftSpokenOT.blockBits`. A node is a 32-byte seed; its children are
/// G_b(s) = H("ote/ggm"; s, u8(b)) for b ∈ {0, 1}. Leaf x ∈ [0, 2^k) is reached by taking branch
/// bit l of x (LSB first) at level l, so the nodes of depth d are indexed by x mod 2^d and node p
/// of depth l has the children p (branch 0) and p + 2^l (branch 1) at depth l + 1.
enum GGMTree {
    static let depth = SoftSpokenOT.blockBits
    static let leafCount = 1 << depth
    static let seedSize = 32
    /// e_l^0 ‖ e_l^1 per level.
    static let correctionSize = 2 * seedSize * depth

    /// G_b(seed) = H("ote/ggm"; seed, u8(b)) (the plain definition; the trees use `NodeHasher`).
    static func child(_ seed: [UInt8], branch: UInt8) -> [UInt8] {
        DKLsHash.h("ote/ggm", seed, [branch])
    }

    /// G_b with one reused SHA-256 context and frame: byte-for-byte `child(_:branch:)` (the known
    /// answers of dkls23.md Appendix A pin both), without an allocation per hash.
    final class NodeHasher {
        private let context = SHA2Context(SHA256.self)
        private var frame: [UInt8]
        private let seedOffset: Int
        private let branchOffset: Int

        init() {
            var frame = DKLsHash.domain.frameHeader("ote/ggm", fieldCount: 2)
            DomainHash.appendUInt32(UInt32(seedSize), to: &frame)
            seedOffset = frame.count
            frame += [UInt8](repeating: 0, count: seedSize)
            DomainHash.appendUInt32(1, to: &frame)
            branchOffset = frame.count
            frame.append(0)
            self.frame = frame
        }

        func child(_ seed: [UInt8], branch: UInt8) -> [UInt8] {
            // Seeds are 32 bytes by construction (CSPRNG roots, decoded fixed-size fields, hash outputs).
            guard seed.count == seedSize else { return GGMTree.child(seed, branch: branch) }
            for k in 0..<seedSize { frame[seedOffset + k] = seed[k] }
            frame[branchOffset] = branch
            frame.withUnsafeBytes { context.update($0) }
            return context.finalize()   // also resets the context for the next node
        }
    }

    /// Every level of the tree grown from `root`: `levels[d]` holds the 2^d nodes of depth d.
    static func expand(root: [UInt8]) -> [[[UInt8]]] {
        let hasher = NodeHasher()
        var levels: [[[UInt8]]] = [[root]]
        for l in 0..<depth {
            let parents = levels[l]
            var next = [[UInt8]](repeating: [], count: 2 * parents.count)
            for p in parents.indices {
                next[p] = hasher.child(parents[p], branch: 0)
                next[p + parents.count] = hasher.child(parents[p], branch: 1)
            }
            levels.append(next)
        }
        return levels
    }

    /// Bob's correction for one tree (64·k bytes): for each level l, e_l^0 ‖ e_l^1 with
    /// e_l^c = L_l^{1−c} ⊕ K_{l,c}, where L_l^b is the XOR of the depth-(l+1) nodes on branch b
    /// at level l, and (K_{l,0}, K_{l,1}) are the base-OT keys of this tree's level l.
    static func corrections(levels: [[[UInt8]]], zeroKeys: ArraySlice<[UInt8]>, oneKeys: ArraySlice<[UInt8]>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(correctionSize)
        for l in 0..<depth {
            let nodes = levels[l + 1], half = 1 << l
            var sums = [[UInt8](repeating: 0, count: seedSize), [UInt8](repeating: 0, count: seedSize)]
            for p in 0..<(2 * half) {
                let branch = p >> l   // the level-l bit of p (p < 2^{l+1})
                for k in 0..<seedSize { sums[branch][k] ^= nodes[p][k] }
            }
            out += Bits.xor(sums[1], zeroKeys[zeroKeys.startIndex + l])
            out += Bits.xor(sums[0], oneKeys[oneKeys.startIndex + l])
        }
        return out
    }

    /// Alice's walk down a punctured tree, constant time in `choices` (the k choice bits = the
    /// punctured leaf Δ_i, one UInt64 0/1 per level). At level l she knows every depth-l node except
    /// the one on the punctured path (held as 32 zero bytes and expanded like the others); `sibling`
    /// gets l and the XOR of the known depth-(l+1) nodes on the off-path branch, and returns the
    /// off-path sibling at depth l + 1. Returns the leaves (the punctured leaf is a don't-care value
    /// that SoftSpoken multiplies by 0) and the co-path (the k siblings).
    static func walk(choices: [UInt64], sibling: (Int, [UInt8]) -> [UInt8]) -> (leaves: [[UInt8]], coPath: [[UInt8]]) {
        let hasher = NodeHasher()
        var nodes = [[UInt8](repeating: 0, count: seedSize)]
        var path: UInt64 = 0   // index of the punctured node at the current depth (secret)
        var coPath: [[UInt8]] = []
        for l in 0..<depth {
            let half = nodes.count
            var next = [[UInt8]](repeating: [], count: 2 * half)
            for p in 0..<half {
                next[p] = hasher.child(nodes[p], branch: 0)
                next[p + half] = hasher.child(nodes[p], branch: 1)
            }
            // XOR of the known children on each branch: every parent except the punctured one.
            var sum0 = [UInt8](repeating: 0, count: seedSize), sum1 = sum0
            for p in 0..<half {
                let known = ~equalMask(UInt64(p), path)
                for k in 0..<seedSize {
                    sum0[k] ^= next[p][k] & known
                    sum1[k] ^= next[p + half][k] & known
                }
            }
            let c = choices[l] & 1
            // The off-path branch is 1 − c: sum1 when c = 0, sum0 when c = 1.
            let found = sibling(l, Bits.select(sum0, sum1, bit: c))
            let siblingIndex = path + (1 - c) * UInt64(half)
            path += c * UInt64(half)
            for q in 0..<(2 * half) {
                let isSibling = equalMask(UInt64(q), siblingIndex), isPath = equalMask(UInt64(q), path)
                for k in 0..<seedSize {
                    next[q][k] = ((found[k] & isSibling) | (next[q][k] & ~isSibling)) & ~isPath
                }
            }
            coPath.append(found)
            nodes = next
        }
        return (nodes, coPath)
    }

    /// Alice's co-path from Bob's correction for one tree (`correction` has exactly
    /// `correctionSize` bytes; `keys[l]` = K_{l,c_l}).
    static func coPath(choices: [UInt64], correction: ArraySlice<UInt8>, keys: ArraySlice<[UInt8]>) -> [[UInt8]] {
        walk(choices: choices) { l, others in
            let offset = correction.startIndex + 2 * seedSize * l
            let e0 = Array(correction[offset..<(offset + seedSize)])
            let e1 = Array(correction[(offset + seedSize)..<(offset + 2 * seedSize)])
            // L_l^{1−c} = e_l^c ⊕ K_{l,c}; the sibling is L_l^{1−c} minus the known nodes on that branch.
            let sum = Bits.xor(Bits.select(e1, e0, bit: choices[l]), keys[keys.startIndex + l])
            return Bits.xor(sum, others)
        }.coPath
    }

    /// The leaves of the punctured tree from its co-path.
    static func puncturedLeaves(choices: [UInt64], coPath: ArraySlice<[UInt8]>) -> [[UInt8]] {
        walk(choices: choices) { l, _ in coPath[coPath.startIndex + l] }.leaves
    }

    /// 0xFF when a == b, else 0x00, without a branch.
    @inline(__always)
    static func equalMask(_ a: UInt64, _ b: UInt64) -> UInt8 {
        let difference = a ^ b
        let nonZero = (difference | (0 &- difference)) >> 63
        return UInt8(truncatingIfNeeded: 0 &- (1 ^ nonZero))
    }
}
