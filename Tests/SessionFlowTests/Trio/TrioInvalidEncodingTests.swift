@_spi(InProcess) import MPCProtocols
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing

/// Issue 10: invalid points and scalars in protocol messages. The trio party machines
/// (the `SessionRun`s, exactly what the app and both nodes run) are driven in memory, one
/// message of node B's is rewritten *as a protocol message* — after its sender built it and before any
/// framing, so nothing but the receiver's protocol checks stands in the way (over the wire this is a
/// node sending it inside a validly signed and encrypted frame) — with a point field replaced by an
/// off-curve / identity / out-of-range / small-order encoding, or a scalar field by a value ≥ the
/// group order. Every receiver must refuse with a typed `ProtocolError` that blames B (or nobody), and
/// no party may finish.
///
/// Messages (offsets from `dkls23.md` §12–13 and `frost.md`): DKLs DKG R2 broadcast (A_{i,0}, A_{i,1},
/// B_{i,0}, B_{i,1}; the Schnorr proof scalars) and R3 broadcast (proof scalars); DKLs signing R2 P2P
/// (R_i, pk_i, Γ^u, Γ^v; ψ) and R3 (w_i, u_i); FROST DKG R1 (φ_0, φ_1, R; μ) and FROST signing R1
/// (hiding, binding) and R2 (z). Default run: every field once (encodings rotate); long run: every
/// field with every encoding.
@Suite("Trio protocol machines: invalid points and scalars from node B", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioInvalidEncodingTests {
    enum Curve: Sendable { case secp256k1, ed25519 }

    /// Bad encodings for a point field of `curve`.
    static func badPoints(_ curve: Curve) -> [(String, [UInt8])] {
        switch curve {
        case .secp256k1:
            // The first x with no curve point (x³ + 7 a non-residue).
            var offCurve = [UInt8](repeating: 0, count: 33)
            offCurve[0] = 0x02
            for x in UInt8(1)...UInt8(255) {
                offCurve[32] = x
                if (try? Secp256k1.Point(compressed: offCurve)) == nil { break }
            }
            let validX = try! Secp256k1.Point(base: Secp256k1.Scalar.random()).compressed()
            return [("off-curve", offCurve),
                    ("identity (no encoding: 0x00…)", [UInt8](repeating: 0, count: 33)),
                    ("x ≥ p", [0x02] + [UInt8](repeating: 0xFF, count: 32)),
                    ("hybrid prefix 0x06", [0x06] + validX.dropFirst())]
        case .ed25519:
            return [("small order", try! Hex.decode("ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")),
                    ("identity", [1] + [UInt8](repeating: 0, count: 31)),
                    ("non-canonical y = p", try! Hex.decode("edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f")),
                    ("off-curve", try! Hex.decode("123456f9e9d319cad973b84cc4c835c8ee73281f5e2638d2d2b352c09edccbfb"))]
        }
    }

    /// Scalars ≥ the group order (secp256k1 big-endian, Ed25519 little-endian).
    static func badScalars(_ curve: Curve) -> [(String, [UInt8])] {
        switch curve {
        case .secp256k1:
            return [("n", try! Hex.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")),
                    ("2²⁵⁶ − 1", [UInt8](repeating: 0xFF, count: 32))]
        case .ed25519:
            return [("L", try! Hex.decode("edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010")),
                    ("2²⁵⁶ − 1", [UInt8](repeating: 0xFF, count: 32))]
        }
    }

    enum Run: String, CaseIterable, Sendable { case dklsKeygen, dklsSign, frostKeygen, frostSign }

    struct Field: Sendable {
        let tag: UInt16
        let offset: Int
        let isPoint: Bool
        let expectedLength: Int?
    }

    static func fields(_ run: Run) -> [Field] {
        switch run {
        case .dklsKeygen:
            // R2 broadcast, keygen t = 2 (324 B): Atx (2 × 33) ‖ π^x (64) ‖ Btx (2 × 33) ‖ π^v (64) ‖ cc ‖ salt.
            [0, 33, 130, 163].map { Field(tag: DKLsTag.dkgRound2Broadcast, offset: $0, isPoint: true, expectedLength: 324) }
                + [66, 98, 196, 228].map { Field(tag: DKLsTag.dkgRound2Broadcast, offset: $0, isPoint: false, expectedLength: 324) }
                // R3 broadcast (160 B): TH ‖ Schnorr ‖ Schnorr.
                + [32, 64, 96, 128].map { Field(tag: DKLsTag.dkgRound3Broadcast, offset: $0, isPoint: false, expectedLength: 160) }
        case .dklsSign:
            // R2 P2P: fsid ‖ R_i ‖ salt ‖ pk_i ‖ Γ^u ‖ Γ^v ‖ ψ ‖ RVOLE; R3: fsid ‖ m ‖ w_i ‖ u_i.
            [32, 97, 130, 163].map { Field(tag: DKLsTag.signRound2Direct, offset: $0, isPoint: true, expectedLength: 49_476) }
                + [Field(tag: DKLsTag.signRound2Direct, offset: 196, isPoint: false, expectedLength: 49_476)]
                + [64, 96].map { Field(tag: DKLsTag.signFinish, offset: $0, isPoint: false, expectedLength: 128) }
        case .frostKeygen:
            // R1 broadcast: φ_0 ‖ φ_1 ‖ R ‖ μ.
            [0, 32, 64].map { Field(tag: 0x0101, offset: $0, isPoint: true, expectedLength: nil) }
                + [Field(tag: 0x0101, offset: 96, isPoint: false, expectedLength: nil)]
        case .frostSign:
            // R1: hiding ‖ binding; R2: transcript ‖ z.
            [0, 32].map { Field(tag: 0x1101, offset: $0, isPoint: true, expectedLength: 64) }
                + [Field(tag: 0x1301, offset: 32, isPoint: false, expectedLength: 64)]
        }
    }

    static let dklsShares: [DKLsKeyshare] = {
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        return try! DKLsInProcess.keygen(partyCount: 3, threshold: 2, using: &rng)
    }()
    static let frostShares: [FROST.Keyshare] = {
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        return try! FROST.LocalRun.keygen(threshold: 2, parties: 3, using: &rng)
    }()

    static func machines(_ run: Run) throws -> [PartyIndex: any SessionRun] {
        let instance = InstanceID.random(), setupHash = SetupHash(checked: SecureRandom.bytes(count: 32))
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        switch run {
        case .dklsKeygen:
            return try Dictionary(uniqueKeysWithValues: [PartyIndex(0), 1, 2].map {
                ($0, try DKLsDKGRun.keygen(local: $0, partyCount: 3, threshold: 2, instanceID: instance, setupHash: setupHash,
                                           mode: .trio, groupID: nil))
            })
        case .dklsSign:
            let hash = SecureRandom.bytes(count: 32)
            return try Dictionary(uniqueKeysWithValues: [PartyIndex(0), 2].map {
                ($0, try DKLsSignRun(keyshare: dklsShares[Int($0)], signers: [0, 2], instanceID: instance,
                                     setupHash: setupHash, path: try DerivationPath("m"), messageHash: hash))
            })
        case .frostKeygen:
            return try Dictionary(uniqueKeysWithValues: [PartyIndex(0), 1, 2].map {
                ($0, try FROSTDKGRun.keygen(local: $0, partyCount: 3, threshold: 2, instanceID: instance, mode: .trio,
                                            groupID: nil, using: &rng))
            })
        case .frostSign:
            return try Dictionary(uniqueKeysWithValues: [PartyIndex(0), 2].map {
                ($0, try FROSTSignRun(keyshare: frostShares[Int($0)], signers: [0, 2], message: Array("m".utf8),
                                      path: [], using: &rng))
            })
        }
    }

    /// Routes the machines' messages in memory; `rewrite` may replace B's (party 2) messages. Returns
    /// the first receiver's error (party, error) and the parties that finished.
    static func drive(_ machines: [PartyIndex: any SessionRun],
                      rewrite: (ProtocolMessage) -> ProtocolMessage) throws -> (failure: (PartyIndex, ProtocolError)?, finished: [PartyIndex]) {
        var machines = machines
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let parties = machines.keys.sorted()
        var inbox: [PartyIndex: [ProtocolMessage]] = [:]
        func deliver(_ out: [ProtocolMessage]) {
            for original in out {
                let message = original.from == 2 ? rewrite(original) : original
                for to in parties where to != message.from && (message.to == nil || message.to == to) {
                    inbox[to, default: []].append(message)
                }
            }
        }
        for party in parties {
            guard var machine = machines[party] else { continue }
            deliver(try machine.start(using: &rng))
            machines[party] = machine
        }
        var progressed = true
        while progressed {
            progressed = false
            for party in parties {
                guard var machine = machines[party], !machine.isFinished else { continue }
                var rest = inbox[party] ?? []
                guard let taken = machine.takeAwaited(from: &rest) else { continue }
                inbox[party] = rest
                do {
                    deliver(try machine.advance(taken, using: &rng))
                } catch {
                    return ((party, error), parties.filter { machines[$0]?.isFinished == true })
                }
                machines[party] = machine
                progressed = true
            }
        }
        return (nil, parties.filter { machines[$0]?.isFinished == true })
    }

    @Test(arguments: Run.allCases)
    func invalidFieldFromNodeB(_ run: Run) throws {
        let curve: Curve = run == .dklsKeygen || run == .dklsSign ? .secp256k1 : .ed25519
        // Honest: everyone finishes.
        let honest = try Self.drive(try Self.machines(run)) { $0 }
        #expect(honest.failure == nil && honest.finished.count == (run == .dklsSign || run == .frostSign ? 2 : 3),
                "\(run) honest: \(String(describing: honest.failure))")
        var cases = 0
        for (f, field) in Self.fields(run).enumerated() {
            let encodings = field.isPoint ? Self.badPoints(curve) : Self.badScalars(curve)
            for (e, (name, bad)) in encodings.enumerated() where longTests || e == f % encodings.count {
                cases += 1
                let context = "\(run) tag 0x\(String(field.tag, radix: 16)) offset \(field.offset): \(name)"
                let hit = LockedValue(false)
                let result = try Self.drive(try Self.machines(run)) { message in
                    guard message.tag == field.tag else { return message }
                    if let length = field.expectedLength, message.payload.count != length {
                        Issue.record("\(context): payload is \(message.payload.count) bytes, expected \(length)")
                        return message
                    }
                    guard message.payload.count >= field.offset + bad.count else { return message }
                    var payload = message.payload
                    payload.replaceSubrange(field.offset..<field.offset + bad.count, with: bad)
                    hit.withLock { $0 = true }
                    return ProtocolMessage(tag: message.tag, from: message.from, to: message.to, payload: payload)
                }
                #expect(hit.withLock { $0 }, "\(context): the field was not found")
                guard let (receiver, error) = result.failure else {
                    Issue.record("\(context): accepted (finished: \(result.finished))")
                    continue
                }
                #expect(receiver != 2, "\(context): B failed on its own message")
                #expect(error.blamedParty == 2 || error.blamedParty == nil, "\(context): \(error) blames another party")
                #expect(!result.finished.contains(receiver), "\(context): the receiver finished")
            }
        }
        print("invalid encodings \(run): \(cases) cases")
    }
}
