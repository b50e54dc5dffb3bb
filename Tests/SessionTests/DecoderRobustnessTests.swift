import MPCCrypto
import MPCProtocols
import Testing
@testable import CloudNode
@testable import SilentShardCore

/// Every decoder of outside bytes survives mutated and truncated valid encodings and random bytes
/// (session.md §3.5: decoders MUST NOT crash on any input). Deterministic, so failures reproduce.
@Suite("Session decoders never crash")
struct DecoderRobustnessTests {
    static func decoders() -> [(String, ([UInt8]) -> Void)] {
        let fields: [UInt8: TLVFieldSize] = [1: .exactly(1), 2: .range(0...8)]
        return [
            ("header", { _ = try? FrameHeader.decode($0) }),
            ("bundle", { _ = try? Frame.parseBundle($0) }),
            ("tlv", { _ = try? TLVPayload.decode($0, fields: fields) }),
            ("setup", { _ = try? SetupPayload(bytes: $0) }),
            ("accept", { _ = try? AcceptPayload(bytes: $0) }),
            ("reject", { _ = try? RejectPayload(bytes: $0) }),
            ("key retired detail", { _ = try? KeyRetiredDetail(bytes: $0) }),
            ("certificate", { _ = try? NodeCertificate(bytes: $0) }),
            ("ready", { _ = try? ReadyPayload(bytes: $0) }),
            ("commit", { _ = try? CommitPayload(bytes: $0) }),
            ("outcome", { _ = try? OutcomePayload(bytes: $0) }),
            ("abort", { _ = try? AbortPayload(bytes: $0) }),
            ("done", { _ = try? DonePayload(bytes: $0) }),
            ("stored", { _ = try? StoredPayload(bytes: $0) }),
            ("export", { _ = try? ExportResponsePayload(bytes: $0) }),
            ("linkOpen", { _ = try? LinkOpenPayload(bytes: $0) }),
            ("peerStatus", { _ = try? PeerStatusPayload(bytes: $0) }),
            ("appState", { _ = try? AppState(bytes: $0) }),
            ("keyStatus", { _ = try? KeyStatus(bytes: $0) }),
            ("partySet", { _ = try? PartySet(bytes: $0) }),
            ("path", { _ = try? DerivationPathBytes(bytes: $0) }),
            ("deviceKey", { _ = try? DeviceKey(identity: $0) }),
            ("sessionKeys", { _ = try? SessionPublicKeys(bytes: $0) }),
        ]
    }

    @Test func mutatedValidEncodings() async throws {
        let cluster = Cluster(mode: .trio)
        let keys = SessionKeyPair()
        let setupPayload = try cluster.setupPayload(.reconcile, appKeys: keys)
        let setup = try await cluster.setupFrame(setupPayload)
        let accept = cluster.accept(from: 1, setupHash: SetupHash.random(), instanceID: setup.header.instanceID, keys: keys,
                                    keyStatus: KeyStatus(currentGen: Generation(checked: [UInt8](repeating: 1, count: 32)), prepared: nil,
                                                         preparedHoldsCommit: false, decision: .unknown))
        let reject = RejectPayload(code: .replay, setupHash: nil, nodeKey: cluster.nodeA.verifyingKey, certificate: cluster.certificate(1),
                                   detail: [1, 2, 3]).encoded()
        let seeds: [[UInt8]] = [
            setup.encoded(), Frame.bundle([setup, accept]), setupPayload.encoded(), accept.body, reject,
            cluster.certificate(2)?.encoded ?? [],
            AbortPayload(code: .rollback, blamed: 1, ban: true, rollback: (KeyID(checked: [UInt8](repeating: 1, count: 32)), Generation(checked: [UInt8](repeating: 2, count: 32))),
                         detail: "x").encoded,
            PeerStatusPayload.response(keyID: KeyID(checked: [UInt8](repeating: 1, count: 32)), gen: Generation(checked: [UInt8](repeating: 2, count: 32)), state: .committed,
                                       digest: [UInt8](repeating: 3, count: 32), commitFrame: [1, 2, 3]).encoded,
            AppState(currentGen: Generation(checked: [UInt8](repeating: 1, count: 32)), staged: (Generation(checked: [UInt8](repeating: 2, count: 32)), [UInt8](repeating: 3, count: 32))).encoded,
            DonePayload.ecdsa([UInt8](repeating: 1, count: 64) + [0]).encoded,
        ]
        var rng = DeterministicRandom(seed: 0x5e55)
        let decoders = Self.decoders()
        for seed in seeds where !seed.isEmpty {
            for _ in 0..<300 {
                var bytes = seed
                for _ in 0...(rng.next() % 4) {
                    let i = Int(rng.next() % UInt64(bytes.count))
                    switch rng.next() % 3 {
                    case 0: bytes[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                    case 1: bytes[i] = [0x00, 0xFF, 0x7F, 0x80][Int(rng.next() % 4)]
                    default: bytes = Array(bytes.prefix(i))
                    }
                    if bytes.isEmpty { break }
                }
                for (_, decode) in decoders { decode(bytes) }
            }
        }
        for length in 0..<300 {
            let bytes = rng.randomBytes(count: length)
            for (_, decode) in decoders { decode(bytes) }
        }
    }
}
