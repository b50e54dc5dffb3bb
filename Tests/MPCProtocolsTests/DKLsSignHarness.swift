import MPCCrypto
@_spi(InProcess) @testable import MPCProtocols

extension DKLsHarness {
    struct SignRun {
        var presignatures: [DKLsPresignature] = []
        var bytesSent: [PartyIndex: Int] = [:]
    }

    /// Rounds 1–2 and the presignature for the given signers; `tamper(round, messages)` may rewrite traffic.
    static func presign(_ keyshares: [DKLsKeyshare], signers: [PartyIndex], path: DerivationPath = .root, seed: UInt64,
                        tamper: @escaping DKLsInProcess.Tamper = { $1 }) throws -> SignRun {
        var rng = DeterministicRandom(seed: seed)
        var run = SignRun()
        run.presignatures = try DKLsInProcess.presign(signers.map { keyshares[Int($0)] }, path: path, using: &rng,
                                                      tamper: tamper) { message in
            run.bytesSent[message.from, default: 0] += message.payload.count * (message.isBroadcast ? signers.count - 1 : 1)
        }
        return run
    }

    /// A whole signature: presign, finish with `hash`, combine at every signer (all must agree).
    static func sign(_ keyshares: [DKLsKeyshare], signers: [PartyIndex], hash: [UInt8], path: DerivationPath = .root,
                     seed: UInt64, tamper: @escaping DKLsInProcess.Tamper = { $1 }) throws -> (Secp256k1.ECDSASignature, SignRun) {
        var run = try presign(keyshares, signers: signers, path: path, seed: seed, tamper: tamper)
        let signature = try DKLsInProcess.finish(run.presignatures, keyshares: signers.map { keyshares[Int($0)] },
                                                 messageHash: hash, tamper: tamper) { message in
            run.bytesSent[message.from, default: 0] += message.payload.count * (signers.count - 1)
        }
        return (signature, run)
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
