import CSecp256k1
import MPCCrypto
import MPCProtocols

/// DKLs23 benchmarks: every party in this process on one thread (in-memory transport), so a figure is
/// the CPU time of all parties together. Baseline: single-party libsecp256k1 ECDSA signing.
enum DKLsBenchmarks {
    static func run(harness: Harness) throws {
        var harness = harness
        harness.samples = 21
        var results: [Harness.Result] = []
        var rng = SecureRandom()
        var bytes: [String: Int] = [:]

        for (n, t) in [(2, 2), (3, 2)] {
            results.append(harness.measure("DKG \(t)-of-\(n) (all parties)") {
                blackHole(try? keygen(n: n, t: t, using: &rng))
            })
        }
        let duo = try keygen(n: 2, t: 2, using: &rng)
        let hash = SHA256.hash(Array("benchmark".utf8))
        results.append(harness.measure("sign 2 parties (presign + finish + combine)") {
            blackHole(try? sign(duo, hash: hash, using: &rng))
        })
        results.append(harness.measure("presign 2 parties (rounds 1–2)") {
            blackHole(try? presign(duo, using: &rng))
        })
        let presignatures = try (0..<harness.samples).map { _ in try presign(duo, using: &rng) }
        results.append(harness.measureEach("finish + combine 2 parties", runs: presignatures.count) { k in
            blackHole(try? finish(presignatures[k], duo, hash: hash))
        })
        let key = Secp256k1.Scalar.random(using: &rng)
        results.append(harness.measure("baseline: local ECDSA sign (libsecp256k1)") {
            blackHole(try? Secp256k1.ECDSA.sign(hash: hash, privateKey: key))
        })
        printTable("DKLs23 (secp256k1), all parties on one core", results, baselines: [
            "sign 2 parties (presign + finish + combine)": "baseline: local ECDSA sign (libsecp256k1)",
        ])

        // Bytes sent per party (payloads; a broadcast counted once per recipient).
        for (n, t) in [(2, 2), (3, 2)] {
            let traffic = try keygenTraffic(n: n, t: t, using: &rng)
            bytes["DKG \(t)-of-\(n)"] = traffic
        }
        bytes["sign, 2 signers"] = try signTraffic(duo, hash: hash, using: &rng)
        print("\n| bytes sent per party | payload bytes |\n|---|---:|")
        for (name, count) in bytes.sorted(by: { $0.key < $1.key }) { print("| \(name) | \(count) |") }
    }

    // MARK: In-process runs

    static func deliver(_ sent: [ProtocolMessage], to party: PartyIndex) -> [ProtocolMessage] {
        sent.filter { $0.from != party && ($0.to == nil || $0.to == party) }
    }

    static func keygen<R: RandomNumberGenerator>(n: Int, t: Int, using rng: inout R,
                                                 traffic: ((ProtocolMessage, Int) -> Void)? = nil) throws -> [DKLsKeyshare] {
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        var round1: [DKLsDKG.Round1State] = [], sent: [ProtocolMessage] = []
        for i in 0..<n {
            let parameters = try DKLsDKG.Parameters(partyCount: n, threshold: t, partyIndex: PartyIndex(i),
                                                    instanceId: instance, setupHash: setup)
            let (state, out) = try DKLsDKG.start(parameters, using: &rng)
            round1.append(state)
            sent += out
        }
        sent.forEach { traffic?($0, n - 1) }
        var round2: [DKLsDKG.Round2State] = [], sent2: [ProtocolMessage] = []
        for (i, state) in round1.enumerated() {
            let (next, out) = try state.round2(deliver(sent, to: PartyIndex(i)), using: &rng)
            round2.append(next)
            sent2 += out
        }
        sent2.forEach { traffic?($0, n - 1) }
        var round3: [DKLsDKG.Round3State] = [], sent3: [ProtocolMessage] = []
        for (i, state) in round2.enumerated() {
            let (next, out) = try state.round3(deliver(sent2, to: PartyIndex(i)), using: &rng)
            round3.append(next)
            sent3 += out
        }
        sent3.forEach { traffic?($0, n - 1) }
        return try round3.enumerated().map { i, state in try state.finish(deliver(sent3, to: PartyIndex(i))) }
    }

    static func presign<R: RandomNumberGenerator>(_ keyshares: [DKLsKeyshare], using rng: inout R,
                                                  traffic: ((ProtocolMessage, Int) -> Void)? = nil) throws -> [DKLsPresignature] {
        let instance = rng.randomBytes(count: 32), setup = rng.randomBytes(count: 32)
        let signers = keyshares.map(\.partyIndex)
        var round1: [DKLsSign.Round1State] = [], sent: [ProtocolMessage] = []
        for keyshare in keyshares {
            let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instance, setupHash: setup)
            let (state, out) = try DKLsSign.start(parameters, using: &rng)
            round1.append(state)
            sent += out
        }
        sent.forEach { traffic?($0, signers.count - 1) }
        var round2: [DKLsSign.Round2State] = [], sent2: [ProtocolMessage] = []
        for (position, state) in round1.enumerated() {
            let (next, out) = try state.round2(deliver(sent, to: signers[position]), using: &rng)
            round2.append(next)
            sent2 += out
        }
        sent2.forEach { traffic?($0, signers.count - 1) }
        return try round2.enumerated().map { position, state in try state.presignature(deliver(sent2, to: signers[position])) }
    }

    static func finish(_ presignatures: [DKLsPresignature], _ keyshares: [DKLsKeyshare], hash: [UInt8],
                       traffic: ((ProtocolMessage, Int) -> Void)? = nil) throws -> Secp256k1.ECDSASignature? {
        var states: [DKLsSign.FinishState] = [], sent: [ProtocolMessage] = []
        for (position, presignature) in presignatures.enumerated() {
            let (state, message) = try presignature.finish(messageHash: hash, keyshare: keyshares[position])
            states.append(state)
            sent.append(message)
        }
        sent.forEach { traffic?($0, presignatures.count - 1) }
        var signature: Secp256k1.ECDSASignature?
        for (position, state) in states.enumerated() {
            signature = try state.combine(deliver(sent, to: keyshares[position].partyIndex))
        }
        return signature
    }

    static func sign<R: RandomNumberGenerator>(_ keyshares: [DKLsKeyshare], hash: [UInt8], using rng: inout R,
                                               traffic: ((ProtocolMessage, Int) -> Void)? = nil) throws -> Secp256k1.ECDSASignature? {
        try finish(try presign(keyshares, using: &rng, traffic: traffic), keyshares, hash: hash, traffic: traffic)
    }

    static func keygenTraffic<R: RandomNumberGenerator>(n: Int, t: Int, using rng: inout R) throws -> Int {
        var sent = 0
        _ = try keygen(n: n, t: t, using: &rng) { message, recipients in
            if message.from == 0 { sent += message.payload.count * (message.isBroadcast ? recipients : 1) }
        }
        return sent
    }

    static func signTraffic<R: RandomNumberGenerator>(_ keyshares: [DKLsKeyshare], hash: [UInt8], using rng: inout R) throws -> Int {
        var sent = 0
        _ = try sign(keyshares, hash: hash, using: &rng) { message, recipients in
            if message.from == 0 { sent += message.payload.count * (message.isBroadcast ? recipients : 1) }
        }
        return sent
    }
}
