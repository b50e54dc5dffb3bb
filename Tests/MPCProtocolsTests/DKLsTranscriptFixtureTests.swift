import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// Our own known-answer test: a deterministic-RNG keygen and signature, every message hashed. A
/// refactor that changes any byte on the wire (or the order of random draws) changes these digests;
/// if the change is intended, update the fixture in the same commit and say why.
/// Last change: protocol v2 (dkls23.md §8 one sender point per base-OT batch and random-x points;
/// §9.4 OTout as a compact frame).
@Suite("DKLs23 frozen transcripts", .serialized, .heavy)
struct DKLsTranscriptFixtureTests {
    static let keygenDigest =
        "ca1ec870322ee74a8fae08cd68426d00f4c1fbc5f57de90f5cadd97dbb73dccf/02bdf47608b09fa5fd1b6f3a00705ef3c0428372fb446b94762fa798cc490a75c1"
    static let signDigest =
        "b6bb62651d4643274b1dc862d43f2bf6cbf3c42f530655b96fda7b54eb2df716/"
        + "a0724543e0d1df9a1ed4b1e12fc8ae8d1fafe1b7768afcf4e46b875fd3b8c8a523218494df096542b011e27eec31e2e12118d1bd3b0fedd70d9a1b5deb8bcf1000"

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
