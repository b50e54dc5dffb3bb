import MPCCrypto
@testable import MPCProtocols

extension DKLsHarness {
    struct SignRun {
        var presignatures: [DKLsPresignature] = []
        var finishStates: [DKLsSign.FinishState] = []
        var finishMessages: [ProtocolMessage] = []
        var bytesSent: [PartyIndex: Int] = [:]
    }

    /// Rounds 1–2 and the presignature for the given signers; `tamper(round, messages)` may rewrite traffic.
    static func presign(_ keyshares: [DKLsKeyshare], signers: [PartyIndex], path: DerivationPath = .root, seed: UInt64,
                        tamper: (Int, [ProtocolMessage]) -> [ProtocolMessage] = { $1 }) throws -> SignRun {
        var rng = DeterministicRandom(seed: seed)
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        var run = SignRun()
        func count(_ messages: [ProtocolMessage]) {
            for m in messages {
                run.bytesSent[m.from, default: 0] += m.payload.count * (m.isBroadcast ? signers.count - 1 : 1)
            }
        }
        var round1: [DKLsSign.Round1State] = [], sent1: [ProtocolMessage] = []
        for index in signers {
            let parameters = try DKLsSign.Parameters(keyshare: keyshares[Int(index)], signers: signers, instanceId: instance,
                                                     setupHash: setup, path: path)
            let (state, out) = try DKLsSign.start(parameters, using: &rng)
            round1.append(state)
            sent1 += out
        }
        count(sent1)
        sent1 = tamper(1, sent1)
        var round2: [DKLsSign.Round2State] = [], sent2: [ProtocolMessage] = []
        for (position, state) in round1.enumerated() {
            let (next, out) = try state.round2(inbox(of: signers[position], sent1), using: &rng)
            round2.append(next)
            sent2 += out
        }
        count(sent2)
        sent2 = tamper(2, sent2)
        for (position, state) in round2.enumerated() {
            run.presignatures.append(try state.presignature(inbox(of: signers[position], sent2)))
        }
        return run
    }

    /// A whole signature: presign, finish with `hash`, combine at every signer (all must agree).
    static func sign(_ keyshares: [DKLsKeyshare], signers: [PartyIndex], hash: [UInt8], path: DerivationPath = .root,
                     seed: UInt64, tamper: (Int, [ProtocolMessage]) -> [ProtocolMessage] = { $1 })
        throws -> (Secp256k1.ECDSASignature, SignRun) {
        var run = try presign(keyshares, signers: signers, path: path, seed: seed, tamper: tamper)
        for (position, presignature) in run.presignatures.enumerated() {
            let (state, message) = try presignature.finish(messageHash: hash, keyshare: keyshares[Int(signers[position])])
            run.finishStates.append(state)
            run.finishMessages.append(message)
            run.bytesSent[message.from, default: 0] += message.payload.count * (signers.count - 1)
        }
        let finishes = tamper(3, run.finishMessages)
        var signatures: [Secp256k1.ECDSASignature] = []
        for (position, state) in run.finishStates.enumerated() {
            signatures.append(try state.combine(inbox(of: signers[position], finishes)))
        }
        return (signatures[0], run)
    }

    /// Flips one bit of the payload of the first message matching `where`.
    static func flip(_ messages: [ProtocolMessage], at offset: Int, where matches: (ProtocolMessage) -> Bool) -> [ProtocolMessage] {
        var done = false
        return messages.map { m in
            guard !done, matches(m) else { return m }
            done = true
            var payload = m.payload
            payload[offset] ^= 0x01
            return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
        }
    }
}
