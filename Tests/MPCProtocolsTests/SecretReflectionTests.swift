import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// `dump` (and any logger that walks a value's fields) must not print secret bytes.
@Suite("Secrets do not leak through reflection", .heavy)
struct SecretReflectionTests {
    static func dumped<T>(_ value: T) -> String {
        var text = ""
        dump(value, to: &text)
        return text
    }

    @Test func scalarsAndKeysReflectNothing() throws {
        let scalar = Secp256k1.Scalar(0x1234_5678_9ABC)
        #expect(!Self.dumped(scalar).contains("123456789abc") && !Self.dumped(scalar).contains("l0"))
        let edScalar = Ed25519.Scalar(0x0BAD_F00D)
        #expect(!Self.dumped(edScalar).contains("storage"))
        let signingKey = Ed25519.SigningKey()
        #expect(!Self.dumped(signingKey).contains(Hex.encode(signingKey.seed).prefix(8)))
    }

    @Test func keysharesAndPresignaturesReflectNothing() throws {
        var rng = DeterministicRandom(seed: 77)
        let keyshares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let text = Self.dumped(keyshares[0])
        #expect(!text.contains(Hex.encode(keyshares[0].share.bytes)))
        let seed = try #require(keyshares[0].pairwise[1]?.zeroSeed)
        #expect(!text.contains(Hex.encode(seed)) && !text.contains("\(seed)"))
        #expect(!text.contains("pairwise") && !text.contains("vrfShare"))
        let presignatures = try DKLsInProcess.presign(keyshares, using: &rng)
        #expect(!Self.dumped(presignatures[0]).contains("secrets"))
        let frost = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        let frostText = Self.dumped(frost[0])
        #expect(!frostText.contains(Hex.encode(frost[0].secretShare.bytes)) && !frostText.contains("storage"))
        let presignature = FROST.Presignature(keyshare: frost[0], using: &rng)
        #expect(!Self.dumped(presignature).contains("storage"))
    }
}
