import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// Our own known-answer test: a deterministic-RNG keygen and signature, every message hashed. A
/// refactor that changes any byte on the wire (or the order of random draws) changes these digests;
/// if the change is intended, update the fixture in the same commit and say why.
@Suite("DKLs23 frozen transcripts", .serialized, .heavy)
struct DKLsTranscriptFixtureTests {
    static let keygenDigest =
        "7e15ed338e39b1d9e33c0f237a645a4a7db22d94b9cf32f76eab3bac96999197/02fd39f13537db32b69e5a8abcb4b7028bf5df37e139391d6e7260b5ac0adf2455"
    static let signDigest =
        "3b59a0484d5e6d98f9f2ee3f25b8fd8dd436a698a7179fd4b151df99cc70204c/"
        + "ac915c6655dc2e2e22927dc067423ddd98417b72e11aae52a093b473e3c497926abc59dd006fb6f0f2fee16a8375c7e82434a7a2133c95174c146d036d53d41d01"

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
