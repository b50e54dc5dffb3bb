import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// Our own known-answer test: a deterministic-RNG keygen and signature, every message hashed. A
/// refactor that changes any byte on the wire (or the order of random draws) changes these digests;
/// if the change is intended, update the fixture in the same commit and say why.
/// Last changed by protocol v2: SoftSpokenOT replaces KOS (GGM corrections in the DKG's R2 P2P,
/// a 7,232-byte OT-extension message in signing R1; spec dkls23.md §8.1, §9).
@Suite("DKLs23 frozen transcripts", .serialized, .heavy)
struct DKLsTranscriptFixtureTests {
    static let keygenDigest =
        "5ee0a3d9b11db70bfb523f20daada7f8c09f6daf0594cc013c597c17e76308e5/02fd39f13537db32b69e5a8abcb4b7028bf5df37e139391d6e7260b5ac0adf2455"
    static let signDigest =
        "269639f1e2eb905ab69b56b4c13802e62465361c337bd6d3b6b8c8391d4de2ee/"
        + "f98467d00dd715d6f62d786d624941e280a32657fdb35d2f6873bd954561bad02788965519fb554889b42e79eed6016d95607bca74d761fa468aa0b5f42a957900"

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
