import MPCCrypto
import MPCProtocols

/// FROST (Ed25519) messages fed to party 0's state machines in a fixed 2-of-2 run. The machines are
/// value types and a rejected message leaves them unchanged, so one fixture state serves every
/// input (signing round 2 uses a state whose presignature was consumed once, in the fixture).
///
/// Selector % 5: 0 DKG round 1 (commitments + proof of knowledge), 1 DKG round 2 (the share
/// package) then finish, 2 signing round 1 (commitments), 3 signing round 2 (signature share) then
/// the aggregate signature (verified), 4 sealed export share into `Sealed.receive`.
enum FROSTTargets {
    static let sessionID = FixedKeys.bytes(0xB1), setupHash = FixedKeys.bytes(0xB2)
    static let message = Array("fuzz message".utf8)
    static let receiverKey = FixedKeys.x25519(0x78)

    struct Run: Sendable {
        var fresh: FROST.KeyGeneration
        var round1From1: [UInt8]
        var afterRound1: FROST.KeyGeneration
        var round2From1: [UInt8]
        var keyshares: [FROST.Keyshare] = []
        var signFresh: FROST.SigningSession
        var signRound1From1: [UInt8]
        var signAfterRound2: FROST.SigningSession
        var signRound2From1: [UInt8]
        var signature: [UInt8] = []
        var exportParameters: FROST.Export.Sealed.Parameters
        var exportFrom1: [UInt8]
    }

    static let run: Run = fixture("FROST 2-of-2 run") {
        var random = DeterministicRandom(seed: 0xF0)
        var machines: [FROST.KeyGeneration] = []
        for p in PartyIndex(0)..<2 {
            machines.append(try FROST.KeyGeneration(party: p, threshold: 2, parties: 2, sessionId: sessionID,
                                                    mode: .keygen, using: &random))
        }
        let fresh = machines[0], round1From1 = machines[1].round1Message
        try machines[0].receiveRound1(machines[1].round1Message, from: 1)
        try machines[1].receiveRound1(machines[0].round1Message, from: 0)
        let afterRound1 = machines[0]
        guard let round2From1 = try machines[1].round2Messages()[0],
              let round2From0 = try machines[0].round2Messages()[1] else { throw ProtocolError.invalidInput(.invalidParameters) }
        try machines[0].receiveRound2(round2From1, from: 1)
        try machines[1].receiveRound2(round2From0, from: 0)
        let keyshares = [try machines[0].finish(), try machines[1].finish()]

        var sessions: [FROST.SigningSession] = []
        for p in 0..<2 {
            let presignature = FROST.Presignature(keyshare: keyshares[p], using: &random)
            sessions.append(try FROST.SigningSession(keyshare: keyshares[p], signers: [0, 1], message: message,
                                                     path: [1, 2], presignature: presignature))
        }
        let signFresh = sessions[0], signRound1From1 = sessions[1].round1Message
        try sessions[0].receiveRound1(sessions[1].round1Message, from: 1)
        try sessions[1].receiveRound1(sessions[0].round1Message, from: 0)
        let share0 = try sessions[0].round2(), share1 = try sessions[1].round2()
        let signAfterRound2 = sessions[0]
        try sessions[0].receiveRound2(share1, from: 1)
        try sessions[1].receiveRound2(share0, from: 0)
        let signature = try sessions[0].signature()

        let parameters = { (p: Int) throws(ProtocolError) -> FROST.Export.Sealed.Parameters in
            try FROST.Export.Sealed.Parameters(keyshare: keyshares[p], exporters: [0, 1], receiver: 0,
                                        receiverKey: receiverKey.publicKey, instanceId: sessionID, setupHash: setupHash)
        }
        let exportFrom1 = try FROST.Export.Sealed.exportShare(try parameters(1), using: &random)
        let exportParameters = try parameters(0)
        _ = try FROST.Export.Sealed.receive(exportParameters, privateKey: receiverKey, messages: [1: exportFrom1])
        return Run(fresh: fresh, round1From1: round1From1, afterRound1: afterRound1, round2From1: round2From1,
                   keyshares: keyshares, signFresh: signFresh, signRound1From1: signRound1From1,
                   signAfterRound2: signAfterRound2, signRound2From1: share1, signature: signature,
                   exportParameters: exportParameters, exportFrom1: exportFrom1)
    }

    static func isValid(_ signature: [UInt8], session: FROST.SigningSession) -> Bool {
        guard let key = try? Ed25519.VerifyingKey(bytes: session.derivation.publicKey.bytes) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    static let messages = FuzzTarget(
        name: "frost", summary: "FROST DKG round 1/2, signing commitments/shares, sealed export share",
        seeds: {
            let run = Self.run
            return [[0] + run.round1From1, [1] + run.round2From1, [2] + run.signRound1From1,
                    [3] + run.signRound2From1, [4] + run.exportFrom1]
        },
        prepare: {
            expect(isValid(Self.run.signature, session: Self.run.signAfterRound2), "fixture signature")
        },
        run: { input in
            guard let (selector, payload) = split(input) else { return }
            let run = Self.run
            switch selector % 5 {
            case 0:
                var machine = run.fresh
                guard (try? machine.receiveRound1(payload, from: 1)) != nil else { return }
                if (try? machine.round2Messages()) != nil { accepted() }
            case 1:
                var machine = run.afterRound1
                guard (try? machine.receiveRound2(payload, from: 1)) != nil, let share = try? machine.finish() else { return }
                accepted()
                expect(share == run.keyshares[0], "FROST DKG accepted a different share package")
            case 2:
                var session = run.signFresh
                if (try? session.receiveRound1(payload, from: 1)) != nil { accepted() }
            case 3:
                var session = run.signAfterRound2
                guard (try? session.receiveRound2(payload, from: 1)) != nil, let signature = try? session.signature() else { return }
                accepted()
                expect(isValid(signature, session: session), "FROST aggregate signature does not verify")
            default:
                if let secret = try? FROST.Export.Sealed.receive(run.exportParameters, privateKey: receiverKey, messages: [1: payload]) {
                    accepted()
                    expect(FROST.Point(base: secret) == run.keyshares[0].publicKey, "sealed export returned another key")
                }
            }
        })
}
