@_spi(InProcess) import MPCProtocols
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing

/// `FROSTRecoverRun` on its own (messages routed in memory): honest run, and a
/// holder whose PKI copy or σ differs is caught by the app, which then has no share.
@Suite("FROST recovery machine", .heavy, .timeLimit(.minutes(30)))
struct FROSTRecoverMachineTests {
    enum Tamper { case none, pki, sigma }

    /// Runs the three machines; `tamper` rewrites B's 0x4202 message to the app. Returns the app's
    /// error, if any, and every party's result.
    static func run(_ tamper: Tamper) throws -> (error: ProtocolError?, results: [PartyIndex: Keyshare], key: [FROST.Keyshare]) {
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 3, using: &rng)
        let instance = InstanceID.random()
        var machines: [PartyIndex: FROSTRecoverRun] = [
            0: try FROSTRecoverRun(local: 0, partyCount: 3, threshold: 2, instanceID: instance, helpers: [1, 2],
                                   current: nil, expectedPublicKey: shares[0].publicKey, mode: .trio,
                                   groupID: nil, using: &rng),
            1: try FROSTRecoverRun(local: 1, partyCount: 3, threshold: 2, instanceID: instance, helpers: [1, 2],
                                   current: shares[1], expectedPublicKey: shares[0].publicKey, mode: .trio,
                                   groupID: nil, using: &rng),
            2: try FROSTRecoverRun(local: 2, partyCount: 3, threshold: 2, instanceID: instance, helpers: [1, 2],
                                   current: shares[2], expectedPublicKey: shares[0].publicKey, mode: .trio,
                                   groupID: nil, using: &rng),
        ]
        var inbox: [PartyIndex: [ProtocolMessage]] = [0: [], 1: [], 2: []]
        func deliver(_ out: [ProtocolMessage]) {
            for var message in out {
                for to: PartyIndex in [0, 1, 2] where to != message.from && (message.to == nil || message.to == to) {
                    if to == 0, message.from == 2, message.tag == FROST.MessageTag.repairStep2.rawValue {
                        var payload = message.payload
                        switch tamper {
                        case .none: break
                        case .pki: payload[payload.count - 1] ^= 1
                        case .sigma: payload[0] ^= 1
                        }
                        message = ProtocolMessage(tag: message.tag, from: message.from, to: message.to, payload: payload)
                    }
                    inbox[to, default: []].append(message)
                }
            }
        }
        for party: PartyIndex in [0, 1, 2] { deliver(try machines[party]!.start(using: &rng)) }
        var progressed = true
        while progressed {
            progressed = false
            for party: PartyIndex in [0, 1, 2] {
                guard var machine = machines[party], !machine.isFinished else { continue }
                var rest = inbox[party] ?? []
                guard let taken = machine.takeAwaited(from: &rest) else { continue }
                inbox[party] = rest
                do {
                    deliver(try machine.advance(taken, using: &rng))
                } catch {
                    if party == 0 { return (error, [:], shares) }
                    throw error
                }
                machines[party] = machine
                progressed = true
            }
        }
        var results: [PartyIndex: Keyshare] = [:]
        for (party, machine) in machines { if let k = machine.outcome { results[party] = k } }
        return (nil, results, shares)
    }

    @Test func honestRepairAndRefresh() throws {
        let (error, results, old) = try Self.run(.none)
        #expect(error == nil)
        #expect(results.count == 3)
        let new = try [PartyIndex(0), 1, 2].map { try #require(results[$0]).frostKeyshare() }
        #expect(Set(new.map(\.generation)).count == 1 && new[0].generation != old[0].generation)
        #expect(new.allSatisfy { $0.publicKey == old[0].publicKey && $0.chainCode == old[0].chainCode })
        #expect(new[1].secretShare != old[1].secretShare)
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let message = Array("repaired".utf8)
        let key = try Ed25519.VerifyingKey(bytes: old[0].publicKey.bytes)
        for signers: [PartyIndex] in [[0, 1], [0, 2], [1, 2]] {
            #expect(key.isValidSignature(try FROST.LocalRun.sign(new, signers: signers, message: message, using: &rng), for: message))
        }
    }

    @Test func differingPKIIsRefused() throws {
        let (error, results, _) = try Self.run(.pki)
        #expect(error == .abort(party: nil, reason: .publicKeyMismatch))
        #expect(results[0] == nil)
    }

    @Test func badSigmaIsRefused() throws {
        let (error, results, _) = try Self.run(.sigma)
        #expect(error == .abort(party: nil, reason: .invalidShare))
        #expect(results[0] == nil)
    }
}
