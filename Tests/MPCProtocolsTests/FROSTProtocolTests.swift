import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

@Suite("FROST DKG and signing", .heavy)
struct FROSTProtocolTests {
    static func verify(_ key: Ed25519.Point, _ signature: [UInt8], _ message: [UInt8]) -> Bool {
        (try? Ed25519.VerifyingKey(bytes: key.bytes))?.isValidSignature(signature, for: message) ?? false
    }

    @Test(arguments: [(UInt8(2), UInt8(2)), (2, 3), (3, 5), (4, 4)])
    func keygenAndSignEverySubset(t: UInt8, n: UInt8) throws {
        var rng = DeterministicRandom(seed: UInt64(t) << 8 | UInt64(n))
        let shares = try FROST.LocalRun.keygen(threshold: t, parties: n, using: &rng)
        #expect(shares.count == Int(n))
        for s in shares {
            #expect(s.publicKey == shares[0].publicKey)
            #expect(s.generation == shares[0].generation)
            #expect(s.chainCode == shares[0].chainCode)
            #expect(s.verifyingShares == shares[0].verifyingShares)
            #expect(try FROST.Keyshare(encoded: s.encoded) == s)
            #expect(s.encoded.count == FROST.Keyshare.encodedSize(parties: Int(n)))
        }
        // Every t-subset signs.
        for subset in frostSubsets(of: Array(0..<n), size: Int(t)) {
            let message = FROST.randomBytes(Int(rng.next() % 100), using: &rng)
            let signature = try FROST.LocalRun.sign(shares, signers: subset, message: message, using: &rng)
            #expect(Self.verify(shares[0].publicKey, signature, message), "signers \(subset)")
        }
        // More than t signers too.
        if n > t {
            let signature = try FROST.LocalRun.sign(shares, signers: Array(0..<n), message: [1, 2, 3], using: &rng)
            #expect(Self.verify(shares[0].publicKey, signature, [1, 2, 3]))
        }
    }

    @Test func refreshKeepsKeyAndChangesShares() throws {
        var rng = DeterministicRandom(seed: 11)
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 3, using: &rng)
        let refreshed = try FROST.LocalRun.keyGeneration(threshold: 2, parties: 3, sessionId: FROST.randomBytes(32, using: &rng),
                                                         mode: { .refresh(shares[Int($0)]) }, using: &rng)
        for (old, new) in zip(shares, refreshed) {
            #expect(new.publicKey == old.publicKey)
            #expect(new.keyId == old.keyId)
            #expect(new.chainCode == old.chainCode)
            #expect(new.generation != old.generation)
            #expect(!(new.secretShare == old.secretShare))
        }
        let signature = try FROST.LocalRun.sign(refreshed, signers: [0, 2], message: [9], using: &rng)
        #expect(Self.verify(shares[0].publicKey, signature, [9]))
        // Old and new shares do not mix.
        var mixed = refreshed
        mixed[2] = shares[2]
        #expect(throws: ProtocolError.self) { try FROST.LocalRun.sign(mixed, signers: [0, 2], message: [9], using: &rng) }
    }

    @Test func derivedSignaturesVerifyUnderDerivedKey() throws {
        var rng = DeterministicRandom(seed: 12)
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 3, using: &rng)
        for path: [UInt32] in [[], [0], [1, 2, 3], [0x7fff_ffff, 44, 0]] {
            let derived = try FROST.derivePublicKey(shares[0], path: path)
            #expect(derived.publicKey == shares[0].publicKey + Ed25519.Point(base: derived.tweak))
            let signature = try FROST.LocalRun.sign(shares, signers: [1, 2], message: [7, 7], path: path, using: &rng)
            #expect(Self.verify(derived.publicKey, signature, [7, 7]))
            if !path.isEmpty { #expect(!Self.verify(shares[0].publicKey, signature, [7, 7])) }
        }
        // 3-of-5 with every party signing along a path.
        let wide = try FROST.LocalRun.keygen(threshold: 3, parties: 5, using: &rng)
        let derived = try FROST.derivePublicKey(wide[4], path: [3, 1])
        let signature = try FROST.LocalRun.sign(wide, signers: [0, 1, 2, 3, 4], message: [1], path: [3, 1], using: &rng)
        #expect(Self.verify(derived.publicKey, signature, [1]))
        #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) {
            try FROST.derivePublicKey(shares[0], path: [1, 0x8000_0000])
        }
        #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) {
            try FROST.LocalRun.sign(shares, signers: [0, 1], message: [], path: [0x8000_0002], using: &rng)
        }
        #expect(try FROST.Derivation.parse("m/0/12/2147483647") == [0, 12, 0x7fff_ffff])
        for bad in ["m/0'", "m/1h", "0/1", "m/01", "m/2147483648", "m//1", "m/-1"] {
            #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) { try FROST.Derivation.parse(bad) }
        }
    }
}

func frostSubsets<T>(of items: [T], size: Int) -> [[T]] {
    if size == 0 { return [[]] }
    guard let first = items.first else { return [] }
    let rest = Array(items.dropFirst())
    return frostSubsets(of: rest, size: size - 1).map { [first] + $0 } + frostSubsets(of: rest, size: size)
}
