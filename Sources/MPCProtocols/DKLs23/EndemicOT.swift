import MPCCrypto

/// Endemic base OT (Masny–Rindal: POPF + Diffie–Hellman), a batch of λc = 256 (DKLs23 spec §8).
///
/// For an ordered pair (Bob, Alice): Alice is the base-OT *receiver* with choice bits Δ (her future KOS
/// secret) and sends message 1; Bob is the base-OT *sender* and answers with message 2. Afterwards Bob
/// holds (K_{j,0}, K_{j,1}) and Alice K_{j,Δ_j}, 32 bytes each.
///
/// Timing note: Alice's hash-to-curve input includes her choice bit, and try-and-increment runs a
/// number of iterations that depends on it. A peer able to time Alice's keygen to the microsecond
/// could learn bits of Δ. See the foundation note; H2C is otherwise applied to public inputs only.
enum EndemicOT {
    static let batchSize = 256
    static let message1Size = batchSize * 66
    static let message2Size = batchSize * 33

    /// POPF_H(j, branch, Q) = H2C("eot/popf", popf_ctx ‖ u32(j) ‖ u8(branch) ‖ enc(Q)).
    static func popfHash(context: [UInt8], index: Int, branch: UInt8, other: [UInt8]) throws(ProtocolError) -> Secp256k1.Point {
        try DKLsHash.hashToCurve("eot/popf", context + DKLsHash.u32(UInt32(index)) + [branch] + other)
    }

    static func key(context: [UInt8], index: Int, branch: UInt8, z: [UInt8], r0: [UInt8], r1: [UInt8],
                    sharedPoint: Secp256k1.Point) throws(ProtocolError) -> [UInt8] {
        DKLsHash.h("eot/key", context, DKLsHash.u32(UInt32(index)), [branch], z, r0, r1, try DKLsHash.enc(sharedPoint))
    }

    /// Alice, the base-OT receiver.
    struct Receiver: Sendable {
        let choices: [UInt8]           // 32 bytes, LSB-first
        private let secrets: [Secp256k1.Scalar]   // a_j
        private let encodedPairs: [[UInt8]]       // enc(r_{j,0}) ‖ enc(r_{j,1})

        /// Message 1 (16,896 bytes) for `choices` (256 bits).
        static func start<R: RandomNumberGenerator>(popfContext: [UInt8], choices: [UInt8], using rng: inout R)
            throws(ProtocolError) -> (Receiver, [UInt8]) {
            var secrets: [Secp256k1.Scalar] = []
            var pairs: [[UInt8]] = []
            var message: [UInt8] = []
            message.reserveCapacity(message1Size)
            for j in 0..<batchSize {
                let choice = Bits.bit(choices, j)
                while true {
                    let a = Secp256k1.Scalar.random(using: &rng)
                    let rho = Secp256k1.Scalar.random(using: &rng)
                    let other = try DKLsHash.enc(Secp256k1.Point(base: rho))   // r_{j,1−c}
                    let mask = try popfHash(context: popfContext, index: j, branch: UInt8(truncatingIfNeeded: choice), other: other)
                    let chosenPoint = Secp256k1.Point(base: a) - mask              // r_{j,c}
                    guard let chosen = try? chosenPoint.compressed() else { continue }
                    // (r_0, r_1) = c ? (other, chosen) : (chosen, other), selected in constant time.
                    let r0 = Bits.select(other, chosen, bit: choice)
                    let r1 = Bits.select(chosen, other, bit: choice)
                    secrets.append(a)
                    pairs.append(r0 + r1)
                    message.append(contentsOf: r0)
                    message.append(contentsOf: r1)
                    break
                }
            }
            return (Receiver(choices: choices, secrets: secrets, encodedPairs: pairs), message)
        }

        /// Alice's keys K_{j,Δ_j} from Bob's message 2.
        func keys(keyContext: [UInt8], message2: [UInt8], from bob: PartyIndex) throws(ProtocolError) -> [[UInt8]] {
            guard message2.count == message2Size else { throw .abort(party: bob, reason: .malformedMessage) }
            var reader = ByteReader(message2, from: bob)
            var keys: [[UInt8]] = []
            keys.reserveCapacity(batchSize)
            for j in 0..<batchSize {
                let z = try reader.readSecp256k1Point()
                let shared = secrets[j] * z
                let pair = encodedPairs[j]
                keys.append(try key(context: keyContext, index: j, branch: UInt8(truncatingIfNeeded: Bits.bit(choices, j)),
                                    z: try DKLsHash.enc(z), r0: Array(pair[0..<33]), r1: Array(pair[33..<66]),
                                    sharedPoint: shared))
            }
            try reader.finish()
            return keys
        }
    }

    /// Bob, the base-OT sender.
    struct Sender: Sendable {
        private let secrets: [Secp256k1.Scalar]                        // s_j
        private let masked: [(Secp256k1.Point, Secp256k1.Point)]       // (m_{j,0}, m_{j,1})
        private let encodedZ: [[UInt8]]
        private let encodedPairs: [[UInt8]]

        /// Decodes Alice's message 1 and answers with message 2 (8,448 bytes).
        static func respond<R: RandomNumberGenerator>(popfContext: [UInt8], message1: [UInt8], from alice: PartyIndex,
                                                      using rng: inout R) throws(ProtocolError) -> (Sender, [UInt8]) {
            guard message1.count == message1Size else { throw .abort(party: alice, reason: .malformedMessage) }
            var reader = ByteReader(message1, from: alice)
            var secrets: [Secp256k1.Scalar] = []
            var masked: [(Secp256k1.Point, Secp256k1.Point)] = []
            var encodedZ: [[UInt8]] = []
            var pairs: [[UInt8]] = []
            var message: [UInt8] = []
            message.reserveCapacity(message2Size)
            for j in 0..<batchSize {
                let r0 = try reader.readSecp256k1Point()
                let r1 = try reader.readSecp256k1Point()
                let r0Bytes = try DKLsHash.enc(r0), r1Bytes = try DKLsHash.enc(r1)
                let m0 = r0 + (try popfHash(context: popfContext, index: j, branch: 0, other: r1Bytes))
                let m1 = r1 + (try popfHash(context: popfContext, index: j, branch: 1, other: r0Bytes))
                guard !m0.isIdentity, !m1.isIdentity else { throw .abort(party: alice, reason: .identityPoint) }
                let s = Secp256k1.Scalar.random(using: &rng)
                let z = try DKLsHash.enc(Secp256k1.Point(base: s))
                secrets.append(s)
                masked.append((m0, m1))
                encodedZ.append(z)
                pairs.append(r0Bytes + r1Bytes)
                message.append(contentsOf: z)
            }
            try reader.finish()
            return (Sender(secrets: secrets, masked: masked, encodedZ: encodedZ, encodedPairs: pairs), message)
        }

        /// Bob's keys (K_{j,0}, K_{j,1}).
        func keys(keyContext: [UInt8]) throws(ProtocolError) -> (zero: [[UInt8]], one: [[UInt8]]) {
            var zero: [[UInt8]] = [], one: [[UInt8]] = []
            for j in 0..<batchSize {
                let r0 = Array(encodedPairs[j][0..<33]), r1 = Array(encodedPairs[j][33..<66])
                zero.append(try key(context: keyContext, index: j, branch: 0, z: encodedZ[j], r0: r0, r1: r1,
                                    sharedPoint: secrets[j] * masked[j].0))
                one.append(try key(context: keyContext, index: j, branch: 1, z: encodedZ[j], r0: r0, r1: r1,
                                   sharedPoint: secrets[j] * masked[j].1))
            }
            return (zero, one)
        }
    }
}
