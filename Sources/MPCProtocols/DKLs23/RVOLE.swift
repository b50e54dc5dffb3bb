import MPCCrypto

/// Random vector OLE, DKLs23 Protocol 5.2 with ℓ = 2, ρ = 1 (spec §10): Bob gets a random χ, Alice
/// inputs (a_0, a_1); afterwards c_k + d_k = a_k·χ with c at Alice and d at Bob.
enum RVOLE {
    static let otCount = SoftSpokenOT.usedColumns
    static let messageSize = otCount * 3 * 32 + 32 + 64

    /// g_j = Hq("rvole/gadget"; u32(j)), a public constant.
    static let gadget: [Secp256k1.Scalar] = (0..<otCount).map { DKLsHash.hq("rvole/gadget", DKLsHash.u32(UInt32($0))) }

    /// Bob's state after sampling (round 1): β, χ and the OT-extension columns t_j.
    struct BobState: Sendable {
        let choices: [UInt8]
        let chi: Secp256k1.Scalar
        let columns: [GF256]
    }

    /// Bob samples β and χ = Σ β_j g_j, and runs the SoftSpokenOT receiver: returns its message.
    static func sample<R: RandomNumberGenerator>(setup: SoftSpokenOT.ReceiverSetup, prgId: [UInt8], using rng: inout R)
        -> (BobState, [UInt8]) {
        let choices = rng.randomBytes(count: otCount / 8)
        var chi = Secp256k1.Scalar.zero
        for j in 0..<otCount { chi += gadget[j].masked(by: Bits.bit(choices, j)) }
        let (columns, message) = SoftSpokenOT.receive(setup: setup, prgId: prgId, choices: choices, using: &rng)
        return (BobState(choices: choices, chi: chi, columns: columns), message)
    }

    /// Alice: SoftSpokenOT sender check on Bob's message, then the multiplication with input (a_0, a_1).
    /// Returns (c_0, c_1) and the RVOLE message ã ‖ η ‖ μ.
    ///
    /// `cheatingRow` (tests only) makes a malicious Alice: ã of that OT row is perturbed before θ and μ
    /// are derived, the classic selective-failure probe on Bob's choice bit.
    static func multiply<R: RandomNumberGenerator>(
        setup: SoftSpokenOT.SenderSetup, prgId: [UInt8], outId: [UInt8], vsid: [UInt8], kosMessage: [UInt8],
        from bob: PartyIndex, inputs: (Secp256k1.Scalar, Secp256k1.Scalar), using rng: inout R,
        cheatingRow: Int? = nil
    ) throws(ProtocolError) -> (c: (Secp256k1.Scalar, Secp256k1.Scalar), message: [UInt8]) {
        let q = try SoftSpokenOT.send(setup: setup, prgId: prgId, message: kosMessage, from: bob)
        let delta = GF256(littleEndian: setup.delta)
        let aHat = Secp256k1.Scalar.random(using: &rng)
        let a = [inputs.0, inputs.1, aHat]
        // Per-OT work in parallel chunks (ChunkedParallelism); partial sums and byte runs are combined
        // in order, so the result is exactly the serial loop's.
        let partials = ChunkedParallelism.map(count: otCount) { range -> MultiplyChunk in
            var chunk = MultiplyChunk(reserving: range.count)
            let hasher = OTOutputHasher(outId: outId)
            for j in range {
                let alpha0 = hasher.output(index: j, column: q[j])
                let alpha1 = hasher.output(index: j, column: q[j] ^ delta)
                chunk.c0 -= gadget[j] * alpha0.0
                chunk.c1 -= gadget[j] * alpha0.1
                #if DEBUG
                let perturbation: Secp256k1.Scalar = j == cheatingRow ? .one : .zero
                #else
                let perturbation = Secp256k1.Scalar.zero   // the cheating hook exists in debug (test) builds only
                #endif
                (alpha0.0 - alpha1.0 + a[0] + perturbation).appendBytes(to: &chunk.aTilde)
                (alpha0.1 - alpha1.1 + a[1] + perturbation).appendBytes(to: &chunk.aTilde)
                (alpha0.2 - alpha1.2 + a[2] + perturbation).appendBytes(to: &chunk.aTilde)
                chunk.alphaZero.append(alpha0)
            }
            return chunk
        }
        var c0 = Secp256k1.Scalar.zero, c1 = Secp256k1.Scalar.zero
        var aTilde: [UInt8] = []
        aTilde.reserveCapacity(otCount * 96)
        var alphaZero: [(Secp256k1.Scalar, Secp256k1.Scalar, Secp256k1.Scalar)] = []
        alphaZero.reserveCapacity(otCount)
        for chunk in partials {
            c0 += chunk.c0
            c1 += chunk.c1
            aTilde += chunk.aTilde
            alphaZero += chunk.alphaZero
        }
        let (theta0, theta1) = thetas(vsid: vsid, aTilde: aTilde)
        let eta = aHat + theta0 * inputs.0 + theta1 * inputs.1
        var muInput: [UInt8] = []
        muInput.reserveCapacity(otCount * 32)
        for alpha0 in alphaZero {
            (alpha0.2 + theta0 * alpha0.0 + theta1 * alpha0.1).appendBytes(to: &muInput)
        }
        let mu = DKLsHash.h512("rvole/mu", vsid, muInput)
        return ((c0, c1), aTilde + eta.bytes + mu)
    }

    /// Bob: completes with Alice's RVOLE message; returns (d_0, d_1). A failed μ check is
    /// AbortAndBan(Alice): whether it fails depends on Bob's secret β.
    static func complete(state: BobState, outId: [UInt8], vsid: [UInt8], message: [UInt8], from alice: PartyIndex)
        throws(ProtocolError) -> (Secp256k1.Scalar, Secp256k1.Scalar) {
        guard message.count == messageSize else { throw .abort(party: alice, reason: .malformedMessage) }
        var reader = ByteReader(message, from: alice)
        var received: [Secp256k1.Scalar] = []
        received.reserveCapacity(otCount * 3)
        for _ in 0..<(otCount * 3) { received.append(try reader.readSecp256k1Scalar()) }
        let aTilde = received
        let eta = try reader.readSecp256k1Scalar()
        let mu = try reader.read(64)
        try reader.finish()
        let (theta0, theta1) = thetas(vsid: vsid, aTilde: Array(message[0..<(otCount * 96)]))
        let partials = ChunkedParallelism.map(count: otCount) { range -> CompleteChunk in
            var chunk = CompleteChunk(reserving: range.count)
            let hasher = OTOutputHasher(outId: outId)
            for j in range {
                let beta = Bits.bit(state.choices, j)
                let gamma = hasher.output(index: j, column: state.columns[j])
                let dDot0 = gamma.0 + aTilde[3 * j].masked(by: beta)
                let dDot1 = gamma.1 + aTilde[3 * j + 1].masked(by: beta)
                let dDot2 = gamma.2 + aTilde[3 * j + 2].masked(by: beta)
                (dDot2 + theta0 * dDot0 + theta1 * dDot1 - eta.masked(by: beta)).appendBytes(to: &chunk.muInput)
                chunk.d0 += gadget[j] * dDot0
                chunk.d1 += gadget[j] * dDot1
            }
            return chunk
        }
        var d0 = Secp256k1.Scalar.zero, d1 = Secp256k1.Scalar.zero
        var muInput: [UInt8] = []
        muInput.reserveCapacity(otCount * 32)
        for chunk in partials {
            d0 += chunk.d0
            d1 += chunk.d1
            muInput += chunk.muInput
        }
        guard Bits.equal(DKLsHash.h512("rvole/mu", vsid, muInput), mu) else {
            throw .abortAndBan(party: alice, reason: .multiplicationCheckFailed)
        }
        return (d0, d1)
    }

    /// One chunk of Alice's per-OT loop: partial sums of c_0, c_1 and its run of ã and α⁰ values.
    private struct MultiplyChunk: Sendable {
        var c0 = Secp256k1.Scalar.zero, c1 = Secp256k1.Scalar.zero
        var aTilde: [UInt8] = []
        var alphaZero: [(Secp256k1.Scalar, Secp256k1.Scalar, Secp256k1.Scalar)] = []
        init(reserving count: Int) {
            aTilde.reserveCapacity(count * 96)
            alphaZero.reserveCapacity(count)
        }
    }

    /// One chunk of Bob's per-OT loop: partial sums of d_0, d_1 and its run of the μ input.
    private struct CompleteChunk: Sendable {
        var d0 = Secp256k1.Scalar.zero, d1 = Secp256k1.Scalar.zero
        var muInput: [UInt8] = []
        init(reserving count: Int) { muInput.reserveCapacity(count * 32) }
    }

    private static func thetas(vsid: [UInt8], aTilde: [UInt8]) -> (Secp256k1.Scalar, Secp256k1.Scalar) {
        let digest = DKLsHash.h("rvole/atilde", vsid, aTilde)
        return (DKLsHash.hq("rvole/theta", digest, [0]), DKLsHash.hq("rvole/theta", digest, [1]))
    }
}
