import MPCCrypto
@_spi(InProcess) import MPCProtocols

/// DKLs23 round messages fed to the real round functions of party 0 in a fixed 2-of-2 run.
///
/// The states of rounds that consume themselves (`ConsumeOnce`: DKG round2/round3, signing
/// round2/presignature) are rebuilt for each input from fixed seeds: the rebuilt state sends exactly the fixture's messages
/// (checked in `prepare`), so party 1's honest messages stay consistent with it. The input replaces
/// the payload of one of party 0's incoming messages (selector: round, message index).
enum DKLsTargets {
    static let instance = FixedKeys.bytes(0xA1), setupHash = FixedKeys.bytes(0xA2)
    static let messageHash = FixedKeys.bytes(0xA3)

    static func rng(_ seed: UInt64) -> DeterministicRandom { DeterministicRandom(seed: seed) }

    static func inbox(_ sent: [ProtocolMessage]) -> [ProtocolMessage] { DKLsInProcess.inbox(of: 0, sent) }

    /// `messages` with the payload of message `index % count` replaced.
    static func replacing(_ messages: [ProtocolMessage], _ index: Int, with payload: [UInt8]) -> [ProtocolMessage] {
        guard !messages.isEmpty else { return messages }
        var copy = messages
        let old = copy[index % copy.count]
        copy[index % copy.count] = ProtocolMessage(tag: old.tag, from: old.from, to: old.to, payload: payload)
        return copy
    }

    /// Seeds: for each round and incoming message, [selector] ‖ honest payload.
    static func seeds(rounds: [[ProtocolMessage]]) -> [[UInt8]] {
        var seeds: [[UInt8]] = []
        for (round, messages) in rounds.enumerated() {
            for (index, message) in messages.enumerated() {
                seeds.append([UInt8(round + rounds.count * index)] + message.payload)
            }
        }
        return seeds
    }

    // MARK: DKG

    struct DKGRun: Sendable {
        var sent1: [ProtocolMessage] = [], sent2: [ProtocolMessage] = [], sent3: [ProtocolMessage] = []
        var own1: [ProtocolMessage] = [], own2: [ProtocolMessage] = [], own3: [ProtocolMessage] = []
        var keyshares: [DKLsKeyshare] = []
        /// Party 0's round-3 state (`finish` may run any number of times).
        var round3: DKLsDKG.Round3State?
    }

    static func dkgParameters(_ party: PartyIndex) throws(ProtocolError) -> DKLsDKG.Parameters {
        try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: party, instanceId: instance,
                               setupHash: setupHash, mode: .keygen)
    }

    static let dkgRun: DKGRun = fixture("DKLs23 keygen") {
        var run = DKGRun()
        var round1: [DKLsDKG.Round1State] = []
        for p in PartyIndex(0)..<2 {
            var random = rng(10 + UInt64(p))
            let (state, out) = try DKLsDKG.start(try dkgParameters(p), using: &random)
            round1.append(state); run.sent1 += out
            if p == 0 { run.own1 = out }
        }
        var round2: [DKLsDKG.Round2State] = []
        for p in PartyIndex(0)..<2 {
            var random = rng(20 + UInt64(p))
            let (state, out) = try round1[Int(p)].round2(DKLsInProcess.inbox(of: p, run.sent1), using: &random)
            round2.append(state); run.sent2 += out
            if p == 0 { run.own2 = out }
        }
        var round3: [DKLsDKG.Round3State] = []
        for p in PartyIndex(0)..<2 {
            var random = rng(30 + UInt64(p))
            let (state, out) = try round2[Int(p)].round3(DKLsInProcess.inbox(of: p, run.sent2), using: &random)
            round3.append(state); run.sent3 += out
            if p == 0 { run.own3 = out }
        }
        for p in PartyIndex(0)..<2 { run.keyshares.append(try round3[Int(p)].finish(DKLsInProcess.inbox(of: p, run.sent3))) }
        run.round3 = round3[0]
        return run
    }

    /// Party 0's fresh state before round `round` (1: round2, 2: round3, 3: finish) and what it sent.
    static func dkgState(before round: Int) throws(ProtocolError)
        -> (DKLsDKG.Round1State?, DKLsDKG.Round2State?, DKLsDKG.Round3State?, [ProtocolMessage]) {
        var random = rng(10)
        let (r1, out1) = try DKLsDKG.start(try dkgParameters(0), using: &random)
        if round == 1 { return (r1, nil, nil, out1) }
        random = rng(20)
        let (r2, out2) = try r1.round2(inbox(dkgRun.sent1), using: &random)
        if round == 2 { return (nil, r2, nil, out2) }
        random = rng(30)
        let (r3, out3) = try r2.round3(inbox(dkgRun.sent2), using: &random)
        return (nil, nil, r3, out3)
    }

    static let dkg = FuzzTarget(
        name: "dkls-dkg", summary: "DKLs23 DKG rounds 1-3 messages into round2 / round3 / finish",
        seeds: { seeds(rounds: [inbox(dkgRun.sent1), inbox(dkgRun.sent2), inbox(dkgRun.sent3)]) },
        prepare: {
            let run = dkgRun
            for round in 1...3 {
                let rebuilt = fixture("DKG rebuild") { try dkgState(before: round).3 }
                expect(rebuilt == [run.own1, run.own2, run.own3][round - 1], "DKG state rebuild is not deterministic")
            }
        },
        run: { input in
            guard let (selector, payload) = split(input) else { return }
            let run = dkgRun
            let round = Int(selector % 3) + 1, index = Int(selector / 3)
            var random = rng(99)
            switch round {
            case 1:
                guard let states = try? dkgState(before: 1) else { fatalError("DKG rebuild failed") }
                if (try? states.0?.round2(replacing(inbox(run.sent1), index, with: payload), using: &random)) != nil { accepted() }
            case 2:
                guard let states = try? dkgState(before: 2) else { fatalError("DKG rebuild failed") }
                if (try? states.1?.round3(replacing(inbox(run.sent2), index, with: payload), using: &random)) != nil { accepted() }
            default:
                if let share = try? run.round3?.finish(replacing(inbox(run.sent3), index, with: payload)) {
                    accepted()
                    expect(share.serialized() == run.keyshares[0].serialized(), "DKG finish accepted a different result")
                }
            }
        })

    // MARK: signing

    struct SignRun: Sendable {
        var sent1: [ProtocolMessage] = [], sent2: [ProtocolMessage] = [], finishes: [ProtocolMessage] = []
        var own1: [ProtocolMessage] = [], own2: [ProtocolMessage] = []
        var finishState: DKLsSign.FinishState?
        var signature: Secp256k1.ECDSASignature?
    }

    static func signParameters(_ party: PartyIndex) throws(ProtocolError) -> DKLsSign.Parameters {
        try DKLsSign.Parameters(keyshare: dkgRun.keyshares[Int(party)], signers: [0, 1], instanceId: instance,
                                setupHash: setupHash, path: try DerivationPath("m/0/1"))
    }

    static let signRun: SignRun = fixture("DKLs23 signing") {
        var run = SignRun()
        var round1: [DKLsSign.Round1State] = []
        for p in PartyIndex(0)..<2 {
            var random = rng(40 + UInt64(p))
            let (state, out) = try DKLsSign.start(try signParameters(p), using: &random)
            round1.append(state); run.sent1 += out
            if p == 0 { run.own1 = out }
        }
        var round2: [DKLsSign.Round2State] = []
        for p in PartyIndex(0)..<2 {
            var random = rng(50 + UInt64(p))
            let (state, out) = try round1[Int(p)].round2(DKLsInProcess.inbox(of: p, run.sent1), using: &random)
            round2.append(state); run.sent2 += out
            if p == 0 { run.own2 = out }
        }
        var states: [DKLsSign.FinishState] = []
        for p in PartyIndex(0)..<2 {
            let presignature = try round2[Int(p)].presignature(DKLsInProcess.inbox(of: p, run.sent2))
            let (state, message) = try presignature.finish(messageHash: messageHash, keyshare: dkgRun.keyshares[Int(p)])
            states.append(state); run.finishes.append(message)
        }
        run.finishState = states[0]
        run.signature = try states[0].combine(DKLsInProcess.inbox(of: 0, run.finishes))
        return run
    }

    static func signState(before round: Int) throws(ProtocolError)
        -> (DKLsSign.Round1State?, DKLsSign.Round2State?, [ProtocolMessage]) {
        var random = rng(40)
        let (r1, out1) = try DKLsSign.start(try signParameters(0), using: &random)
        if round == 1 { return (r1, nil, out1) }
        random = rng(50)
        let (r2, out2) = try r1.round2(inbox(signRun.sent1), using: &random)
        return (nil, r2, out2)
    }

    static let sign = FuzzTarget(
        name: "dkls-sign", summary: "DKLs23 signing R1 / R2 / finish messages into round2 / presignature / combine",
        seeds: { seeds(rounds: [inbox(signRun.sent1), inbox(signRun.sent2), inbox(signRun.finishes)]) },
        prepare: {
            let run = signRun
            for round in 1...2 {
                let rebuilt = fixture("sign rebuild") { try signState(before: round).2 }
                expect(rebuilt == [run.own1, run.own2][round - 1], "signing state rebuild is not deterministic")
            }
            expect(run.signature.map { Secp256k1.ECDSA.verify($0, hash: messageHash, publicKey: derivedKey) } == true, "fixture signature")
        },
        run: { input in
            guard let (selector, payload) = split(input) else { return }
            let run = signRun
            let round = Int(selector % 3) + 1, index = Int(selector / 3)
            var random = rng(98)
            switch round {
            case 1:
                guard let state = try? signState(before: 1).0 else { fatalError("sign rebuild failed") }
                if (try? state.round2(replacing(inbox(run.sent1), index, with: payload), using: &random)) != nil { accepted() }
            case 2:
                guard let state = try? signState(before: 2).1 else { fatalError("sign rebuild failed") }
                if (try? state.presignature(replacing(inbox(run.sent2), index, with: payload))) != nil { accepted() }
            default:
                if let signature = try? run.finishState?.combine(replacing(inbox(run.finishes), index, with: payload)) {
                    accepted()
                    expect(Secp256k1.ECDSA.verify(signature, hash: messageHash, publicKey: derivedKey), "combine returned an invalid signature")
                }
            }
        })

    static var derivedKey: Secp256k1.Point {
        fixture("derived key") {
            let share = dkgRun.keyshares[0]
            return try DerivationPath("m/0/1").derive(publicKey: share.publicKey, chainCode: share.rootChainCode).publicKey
        }
    }

    // MARK: hard derivation + export

    struct DeriveExportRun: Sendable {
        var deriveState: DKLsHardDerivation.State?
        var deriveMessages: [ProtocolMessage] = []
        var child: [UInt8] = []
        var exportParameters: DKLsExport.Parameters?
        var exportMessages: [ProtocolMessage] = []
    }

    static let receiverKey = FixedKeys.x25519(0x77)

    static let deriveExportRun: DeriveExportRun = fixture("DKLs23 hard derivation and export") {
        var run = DeriveExportRun()
        let keyshares = dkgRun.keyshares
        let path = try DerivationPath("m/1'", allowHardened: true)
        var states: [DKLsHardDerivation.State] = []
        for p in 0..<2 {
            var random = rng(60 + UInt64(p))
            let parameters = try DKLsHardDerivation.Parameters(keyshare: keyshares[p], participants: [0, 1],
                                                               instanceId: instance, setupHash: setupHash, path: path)
            let (state, message) = try DKLsHardDerivation.start(parameters, using: &random)
            states.append(state); run.deriveMessages.append(message)
        }
        run.deriveState = states[0]
        run.child = try states[0].finish(inbox(run.deriveMessages)).serialized()
        let exportParameters = { (p: Int) throws(ProtocolError) -> DKLsExport.Parameters in
            try DKLsExport.Parameters(keyshare: keyshares[p], exporters: [0, 1], receiver: 0,
                                      receiverKey: receiverKey.publicKey, instanceId: instance, setupHash: setupHash)
        }
        var random = rng(70)
        run.exportMessages = [try DKLsExport.exportShare(try exportParameters(1), using: &random)]
        run.exportParameters = try exportParameters(0)
        _ = try DKLsExport.receive(try exportParameters(0), privateKey: receiverKey, messages: run.exportMessages)
        return run
    }

    static let deriveExport = FuzzTarget(
        name: "dkls-derive-export", summary: "DKLs23 hard-derivation broadcast into finish; export P2P into receive",
        seeds: { seeds(rounds: [inbox(deriveExportRun.deriveMessages), inbox(deriveExportRun.exportMessages)]) },
        prepare: { _ = deriveExportRun },
        run: { input in
            guard let (selector, payload) = split(input) else { return }
            let run = deriveExportRun
            if selector % 2 == 0 {
                if let child = try? run.deriveState?.finish(replacing(inbox(run.deriveMessages), Int(selector / 2), with: payload)) {
                    accepted()
                    expect(child.serialized() == run.child, "hard derivation accepted a different result")
                }
            } else if let parameters = run.exportParameters {
                if let key = try? DKLsExport.receive(parameters, privateKey: receiverKey,
                                                     messages: replacing(inbox(run.exportMessages), 0, with: payload)) {
                    accepted()
                    expect(key.publicKey == dkgRun.keyshares[0].publicKey, "export returned another key")
                }
            }
        })
}
