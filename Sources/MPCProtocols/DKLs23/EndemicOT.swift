import MPCCrypto

/// Endemic base OT (Masny–Rindal: POPF + Diffie–Hellman), a batch of λc = 256 with one sender
/// key-agreement message per batch (DKLs23 spec, dkls23.md §8; batching as in McQuoid–Rosulek–Roy).
///
/// For an ordered pair (Bob, Alice): Alice is the base-OT *receiver* with choice bits Δ (her future KOS
/// secret) and sends message 1; Bob is the base-OT *sender* and answers with message 2, the single point
/// z = s·G shared by the 256 OTs (every key hash binds j, both r's and the branch). Afterwards Bob holds
/// (K_{j,0}, K_{j,1}) and Alice K_{j,Δ_j}, 32 bytes each.
///
/// The per-OT work runs in `ChunkedParallelism.width` contiguous chunks; every random draw happens
/// before the chunks start, in OT order, so the messages do not depend on the width.
///
/// Constant time in Δ (protocol v3): Alice evaluates the POPF hash for both branches of every OT (one
/// extra hash-to-curve per OT) and selects by mask, so the tries of the variable-time hash-to-curve
/// depend only on public values (j, both branches, r_{j,1−c_j}), not on her choice bits.
enum EndemicOT {
    static let batchSize = 256
    static let message1Size = batchSize * 66
    static let message2Size = 33

    /// POPF_H(j, branch, Q) = H2Cu("eot/popf", popf_ctx ‖ u32(j) ‖ u8(branch) ‖ enc(Q)), uniform in G (dkls23.md §8).
    static func popfHash(context: [UInt8], index: Int, branch: UInt8, other: [UInt8]) throws(ProtocolError) -> Secp256k1.Point {
        try popfHashCounted(context: context, index: index, branch: branch, other: other).point
    }

    /// POPF_H and the number of hash-to-curve tries it took.
    static func popfHashCounted(context: [UInt8], index: Int, branch: UInt8, other: [UInt8]) throws(ProtocolError)
        -> (point: Secp256k1.Point, tries: Int) {
        try DKLsHash.hashToCurveUniform("eot/popf", context + DKLsHash.u32(UInt32(index)) + [branch] + other)
    }

    static func key(context: [UInt8], index: Int, branch: UInt8, z: [UInt8], r0: [UInt8], r1: [UInt8],
                    sharedPoint: Secp256k1.Point) throws(ProtocolError) -> [UInt8] {
        DKLsHash.h("eot/key", context, DKLsHash.u32(UInt32(index)), [branch], z, r0, r1, try DKLsHash.enc(sharedPoint))
    }

    /// The encoding of a uniformly random point with unknown discrete logarithm (dkls23.md §8): a random
    /// x-coordinate and a random parity, redrawn until they decode. Uniform: every x on the curve has
    /// exactly the two points ±y, each picked with probability ½. Nothing secret decides the retries.
    static func randomPointEncoding<R: RandomNumberGenerator>(using rng: inout R) -> [UInt8] {
        while true {
            var candidate = rng.randomBytes(count: 33)
            candidate[0] = 0x02 | (candidate[0] & 1)
            if (try? Secp256k1.Point(compressed: candidate)) != nil { return candidate }
        }
    }

    /// Runs `body` over the batch in `ChunkedParallelism.width` chunks and concatenates the results in
    /// OT order. The first error in OT order wins (a chunk stops at its first error), whatever the width.
    static func perOT<T: Sendable>(_ body: @escaping @Sendable (Int) throws(ProtocolError) -> T) throws(ProtocolError) -> [T] {
        let chunks = ChunkedParallelism.map(count: batchSize) { range -> Result<[T], ProtocolError> in
            var out: [T] = []
            out.reserveCapacity(range.count)
            for j in range {
                do throws(ProtocolError) { out.append(try body(j)) } catch { return .failure(error) }
            }
            return .success(out)
        }
        var all: [T] = []
        all.reserveCapacity(batchSize)
        for chunk in chunks { all += try chunk.get() }
        return all
    }

    /// Alice, the base-OT receiver.
    struct Receiver: Sendable {
        let choices: [UInt8]           // 32 bytes, LSB-first
        private let secrets: [Secp256k1.Scalar]   // a_j
        private let encodedPairs: [[UInt8]]       // enc(r_{j,0}) ‖ enc(r_{j,1})
        /// Hash-to-curve tries message 1 took (the timing the constant-time test compares).
        let popfHashTries: Int

        /// Message 1 (16,896 bytes) for `choices` (256 bits).
        static func start<R: RandomNumberGenerator>(popfContext: [UInt8], choices: [UInt8], using rng: inout R)
            throws(ProtocolError) -> (Receiver, [UInt8]) {
            var secrets: [Secp256k1.Scalar] = [], others: [[UInt8]] = []
            secrets.reserveCapacity(batchSize)
            others.reserveCapacity(batchSize)
            for _ in 0..<batchSize {
                secrets.append(Secp256k1.Scalar.random(using: &rng))
                others.append(randomPointEncoding(using: &rng))   // r_{j,1−c_j}
            }
            let drawnSecrets = secrets, drawnOthers = others
            let results = try perOT { j throws(ProtocolError) -> ([UInt8], Int) in
                let choice = Bits.bit(choices, j)
                let other = drawnOthers[j]
                // Both branches' POPF hashes, whatever c is: the hash-to-curve tries do not follow Δ.
                let (mask0, tries0) = try popfHashCounted(context: popfContext, index: j, branch: 0, other: other)
                let (mask1, tries1) = try popfHashCounted(context: popfContext, index: j, branch: 1, other: other)
                // r_{j,c} = a_j·G − POPF_H(j, c, r_{j,1−c}), both candidates computed and one selected by
                // mask; O (probability ≈ 2^−256 for either) is Abort(–), dkls23.md §7.
                let a = Secp256k1.Point(base: drawnSecrets[j])
                let candidate0 = try DKLsHash.enc(a - mask0), candidate1 = try DKLsHash.enc(a - mask1)
                let chosen = Bits.select(candidate1, candidate0, bit: choice)
                let tries = tries0 + tries1
                // (r_0, r_1) = c ? (other, chosen) : (chosen, other), selected in constant time.
                return (Bits.select(other, chosen, bit: choice) + Bits.select(chosen, other, bit: choice), tries)
            }
            let pairs = results.map(\.0)
            return (Receiver(choices: choices, secrets: secrets, encodedPairs: pairs, popfHashTries: results.reduce(0) { $0 + $1.1 }),
                    pairs.flatMap { $0 })
        }

        /// Alice's keys K_{j,Δ_j} from Bob's message 2 (his point z; Abort(Bob) if it does not decode).
        func keys(keyContext: [UInt8], message2: [UInt8], from bob: PartyIndex) throws(ProtocolError) -> [[UInt8]] {
            guard message2.count == message2Size else { throw .abort(party: bob, reason: .malformedMessage) }
            var reader = ByteReader(message2, from: bob)
            let z = try reader.readSecp256k1Point()
            try reader.finish()
            let zBytes = try DKLsHash.enc(z)
            let choices = choices, secrets = secrets, pairs = encodedPairs
            return try perOT { j throws(ProtocolError) -> [UInt8] in
                let pair = pairs[j]
                return try key(context: keyContext, index: j, branch: UInt8(truncatingIfNeeded: Bits.bit(choices, j)),
                               z: zBytes, r0: Array(pair[0..<33]), r1: Array(pair[33..<66]), sharedPoint: secrets[j] * z)
            }
        }
    }

    /// Bob, the base-OT sender.
    struct Sender: Sendable {
        private let secret: Secp256k1.Scalar                           // s, one per batch
        private let masked: [(Secp256k1.Point, Secp256k1.Point)]       // (m_{j,0}, m_{j,1})
        private let encodedZ: [UInt8]
        private let encodedPairs: [[UInt8]]

        /// Decodes Alice's message 1 and answers with message 2 (33 bytes: enc(z), z = s·G).
        static func respond<R: RandomNumberGenerator>(popfContext: [UInt8], message1: [UInt8], from alice: PartyIndex,
                                                      using rng: inout R) throws(ProtocolError) -> (Sender, [UInt8]) {
            guard message1.count == message1Size else { throw .abort(party: alice, reason: .malformedMessage) }
            let decoded = try perOT { j throws(ProtocolError) -> (Secp256k1.Point, Secp256k1.Point, [UInt8]) in
                var reader = ByteReader(Array(message1[(66 * j)..<(66 * j + 66)]), from: alice)
                let r0 = try reader.readSecp256k1Point()
                let r1 = try reader.readSecp256k1Point()
                let r0Bytes = try DKLsHash.enc(r0), r1Bytes = try DKLsHash.enc(r1)
                let m0 = r0 + (try popfHash(context: popfContext, index: j, branch: 0, other: r1Bytes))
                let m1 = r1 + (try popfHash(context: popfContext, index: j, branch: 1, other: r0Bytes))
                guard !m0.isIdentity, !m1.isIdentity else { throw .abort(party: alice, reason: .identityPoint) }
                return (m0, m1, r0Bytes + r1Bytes)
            }
            let s = Secp256k1.Scalar.random(using: &rng)
            let z = try DKLsHash.enc(Secp256k1.Point(base: s))
            let sender = Sender(secret: s, masked: decoded.map { ($0.0, $0.1) }, encodedZ: z, encodedPairs: decoded.map(\.2))
            return (sender, z)
        }

        /// Bob's keys (K_{j,0}, K_{j,1}).
        func keys(keyContext: [UInt8]) throws(ProtocolError) -> (zero: [[UInt8]], one: [[UInt8]]) {
            let s = secret, masked = masked, z = encodedZ, pairs = encodedPairs
            let both = try perOT { j throws(ProtocolError) -> ([UInt8], [UInt8]) in
                let r0 = Array(pairs[j][0..<33]), r1 = Array(pairs[j][33..<66])
                let zero = try key(context: keyContext, index: j, branch: 0, z: z, r0: r0, r1: r1, sharedPoint: s * masked[j].0)
                let one = try key(context: keyContext, index: j, branch: 1, z: z, r0: r0, r1: r1, sharedPoint: s * masked[j].1)
                return (zero, one)
            }
            return (both.map(\.0), both.map(\.1))
        }
    }
}
