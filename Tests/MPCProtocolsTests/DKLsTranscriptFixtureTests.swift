import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// Our own known-answer test: a deterministic-RNG keygen and signature, every message hashed. A
/// refactor that changes any byte on the wire (or the order of random draws) changes these digests;
/// if the change is intended, update the fixture in the same commit and say why.
/// Last changed by protocol v3 (issue 33): the per-row SoftSpokenOT check (signing R1's OT-extension message
/// û ‖ x̃ ‖ t̃_0…t̃_255 is 9,232 bytes, m′ = 640 with a 128-bit mask chunk; dkls23.md §9.3); the base OT's
/// POPF hash-to-curve with a hashed y parity, both branches evaluated by Alice (DKG R1 P2P, dkls23.md §8); the
/// PPRF consistency proof after the GGM corrections (DKG R2 P2P 18,625 bytes, dkls23.md §8.1).
/// Before, protocol v2: SoftSpokenOT replaces KOS (GGM corrections in the DKG's R2 P2P, dkls23.md §8.1, §9),
/// one sender point per base-OT batch and random-x points (dkls23.md §8), OTout as a compact frame (dkls23.md §9.4).
@Suite("DKLs23 frozen transcripts", .serialized, .heavy)
struct DKLsTranscriptFixtureTests {
    static let keygenDigest =
        "0b01fda19820c768bd84bf832b2613d9ed0371e77ce45fd6895a32cd0676dbcf/02bdf47608b09fa5fd1b6f3a00705ef3c0428372fb446b94762fa798cc490a75c1"
    static let signDigest =
        "1e9ae8c1bda0b59f9215223cb4488970f68d0c2537d524488bb95e69c8a4fe04/"
        + "6abce3e7e55a590eab75358e4d8edeaf639b8d81de4567a43af9d7cf4c69542e1b2ea0f0a6e4c512c260d27eafa752ad8eadf63aa73a99baaeac97cadeebe78a01"

    static func digest(_ messages: [ProtocolMessage]) -> String {
        var bytes: [UInt8] = []
        for m in messages {
            bytes += DKLsHash.u32(UInt32(m.tag)) + [m.from, m.to ?? 0xFF] + DKLsHash.u32(UInt32(m.payload.count)) + m.payload
        }
        return Hex.encode(SHA256.hash(bytes))
    }

    /// Also with the per-OT loops split into 2–4 chunks (`ChunkedParallelism`): the transcript must be
    /// byte-identical whatever the width.
    @Test(arguments: [1, 2, 3, 4])
    func transcriptsAreFrozen(width: Int) throws {
        let saved = ChunkedParallelism.width
        ChunkedParallelism.width = width
        defer { ChunkedParallelism.width = saved }
        var rng = DeterministicRandom(seed: 2026)
        var keygenMessages: [ProtocolMessage] = []
        let keyshares = try DKLsInProcess.keygen(partyCount: 3, threshold: 2, using: &rng, observe: { keygenMessages.append($0) })
        var signMessages: [ProtocolMessage] = []
        let signature = try DKLsInProcess.sign([keyshares[0], keyshares[2]], messageHash: SHA256.hash(Array("fixture".utf8)),
                                               path: try DerivationPath("m/0/1"), using: &rng,
                                               observe: { signMessages.append($0) })
        let keygen = Self.digest(keygenMessages) + "/" + Hex.encode(try keyshares[0].publicKey.compressed())
        let sign = Self.digest(signMessages) + "/" + Hex.encode(signature.compact + [signature.recoveryId])
        #expect(keygen == Self.keygenDigest)
        #expect(sign == Self.signDigest)
    }
}
