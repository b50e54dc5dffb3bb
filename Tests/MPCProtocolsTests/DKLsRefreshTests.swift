import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

@Suite("DKLs23 refresh, recovery and import (spec §12.6–12.7)", .heavy)
struct DKLsRefreshTests {
    static func refreshModes(_ keyshares: [DKLsKeyshare], holders: [PartyIndex], lost: Set<PartyIndex> = [])
        -> [DKLsDKG.Mode] {
        keyshares.map { keyshare in
            .refresh(holders: holders, keyshare: lost.contains(keyshare.partyIndex) ? nil : keyshare,
                     expectedPublicKey: keyshare.publicKey)
        }
    }

    static func sameKey(_ old: [DKLsKeyshare], _ new: [DKLsKeyshare]) {
        for (before, after) in zip(old, new) {
            #expect(after.publicKey == before.publicKey)
            #expect(after.vrfPublicKey == before.vrfPublicKey)
            #expect(after.rootChainCode == before.rootChainCode)
            #expect(after.keyId == before.keyId)
            #expect(after.generation != before.generation)
            #expect(after.share != before.share)
            #expect(after.evaluationPoints[0] != before.evaluationPoints[0])
        }
    }

    @Test func refreshKeepsTheKeyAndRenewsEverythingElse() throws {
        let old = try DKLsHarness.keygen(n: 3, t: 2, seed: 600)
        var rng = DeterministicRandom(seed: 601)
        var sizes: [Int: Set<Int>] = [:]
        let new = try DKLsInProcess.dkg(partyCount: 3, threshold: 2, modes: Self.refreshModes(old, holders: [0, 1, 2]),
                                        using: &rng, observe: { sizes[Int($0.tag), default: []].insert($0.payload.count) })
        Self.sameKey(old, new)
        #expect(sizes[Int(DKLsTag.dkgRound2Broadcast)] == [98])   // 66t − 34
        #expect(sizes[Int(DKLsTag.dkgRound1Direct)] == [16_928])
        #expect(Secp256k1.Point(base: try DKLsHarness.reconstruct([new[0], new[2]])) == old[0].publicKey)
        // An old and a new share do not interpolate to the key.
        #expect(Secp256k1.Point(base: try DKLsHarness.reconstruct([old[0], new[1]])) != old[0].publicKey)
        // New keyshares sign; an old keyshare mixed with a new one is a context mismatch, not a ban.
        let hash = SHA256.hash(Array("after refresh".utf8))
        let signature = try DKLsInProcess.sign([new[0], new[1]], messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: old[0].publicKey))
        #expect(throws: ProtocolError.abort(party: 1, reason: .sessionMismatch)) {
            _ = try DKLsInProcess.sign([old[0], new[1]], messageHash: hash, using: &rng)
        }
    }

    @Test func recoveryOfTheAppShareInTrio() throws {
        let old = try DKLsHarness.keygen(n: 3, t: 2, seed: 610)
        var rng = DeterministicRandom(seed: 611)
        var sizes: [PartyIndex: Set<Int>] = [:]
        let new = try DKLsInProcess.dkg(partyCount: 3, threshold: 2, modes: Self.refreshModes(old, holders: [1, 2], lost: [0]),
                                        using: &rng, observe: { m in
                                            if m.tag == DKLsTag.dkgRound1Direct, let to = m.to { sizes[to, default: []].insert(m.payload.count) }
                                        })
        Self.sameKey(old, new)
        #expect(sizes[0] == [17_259])   // 16,928 + PKI of 2 holders (331)
        let hash = SHA256.hash(Array("recovered".utf8))
        let signature = try DKLsInProcess.sign([new[0], new[2]], messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: old[0].publicKey))
    }

    @Test func recoveryOfACloudShareInTrio() throws {
        // Node B (party 2) lost its share: the app and node A re-share to it.
        let old = try DKLsHarness.keygen(n: 3, t: 2, seed: 615)
        var rng = DeterministicRandom(seed: 616)
        let new = try DKLsInProcess.dkg(partyCount: 3, threshold: 2, modes: Self.refreshModes(old, holders: [0, 1], lost: [2]),
                                        using: &rng)
        Self.sameKey(old, new)
        let hash = SHA256.hash(Array("node B recovered".utf8))
        let signature = try DKLsInProcess.sign([new[1], new[2]], messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: old[0].publicKey))
    }

    @Test func recoveryOfTwoSharesInThreeOfFive() throws {
        let old = try DKLsHarness.keygen(n: 5, t: 3, seed: 620)
        var rng = DeterministicRandom(seed: 621)
        let new = try DKLsInProcess.dkg(partyCount: 5, threshold: 3,
                                        modes: Self.refreshModes(old, holders: [1, 2, 4], lost: [0, 3]), using: &rng)
        Self.sameKey(old, new)
        let hash = SHA256.hash(Array("3-of-5 recovered".utf8))
        let signature = try DKLsInProcess.sign([new[0], new[3], new[4]], messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: old[0].publicKey))
    }

    @Test func recoveringPartyRejectsAnUnexpectedKey() throws {
        let old = try DKLsHarness.keygen(n: 3, t: 2, seed: 630)
        let other = try DKLsHarness.keygen(n: 3, t: 2, seed: 631)
        var rng = DeterministicRandom(seed: 632)
        var modes = Self.refreshModes(old, holders: [1, 2], lost: [0])
        modes[0] = .refresh(holders: [1, 2], keyshare: nil, expectedPublicKey: other[0].publicKey)
        // Party 0 expects another key: the holders' PKI does not match it.
        #expect(throws: ProtocolError.abort(party: nil, reason: .sessionMismatch)) {
            _ = try DKLsInProcess.dkg(partyCount: 3, threshold: 2, modes: modes, using: &rng)
        }
    }

    @Test func holdersMustAgreeOnThePKI() throws {
        let old = try DKLsHarness.keygen(n: 3, t: 2, seed: 640)
        var rng = DeterministicRandom(seed: 641)
        #expect(throws: ProtocolError.abort(party: nil, reason: .sessionMismatch)) {
            _ = try DKLsInProcess.dkg(partyCount: 3, threshold: 2, modes: Self.refreshModes(old, holders: [1, 2], lost: [0]),
                                      using: &rng, tamper: { round, messages in
                                          round == 1 ? DKLsHarness.flip(messages, at: 40) { $0.from == 2 && $0.to == 0 } : messages
                                      })
        }
    }

    @Test(arguments: [(2, 2), (3, 2)])
    func importSplitsAKnownKey(n: Int, t: Int) throws {
        var rng = DeterministicRandom(seed: 650 + UInt64(n))
        let privateKey = Secp256k1.Scalar.random(using: &rng)
        let publicKey = Secp256k1.Point(base: privateKey)
        let chainCode = rng.randomBytes(count: 32)
        let modes: [DKLsDKG.Mode] = (0..<n).map { i in
            .importKey(importer: 0, publicKey: publicKey, chainCode: chainCode, privateKey: i == 0 ? privateKey : nil)
        }
        var sizes: Set<Int> = []
        let keyshares = try DKLsInProcess.dkg(partyCount: n, threshold: t, modes: modes, using: &rng,
                                              observe: { if $0.tag == DKLsTag.dkgRound2Broadcast { sizes.insert($0.payload.count) } })
        #expect(sizes == [66 * t + 63])
        for keyshare in keyshares {
            #expect(keyshare.publicKey == publicKey)
            #expect(keyshare.rootChainCode == chainCode)
        }
        #expect(try DKLsHarness.reconstruct(Array(keyshares.suffix(t))) == privateKey)
        let hash = SHA256.hash(Array("imported".utf8))
        let signature = try DKLsInProcess.sign(Array(keyshares.suffix(t)), messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: publicKey))
    }

    @Test func importerMustHoldTheKey() throws {
        var rng = DeterministicRandom(seed: 660)
        let key = Secp256k1.Scalar.random(using: &rng)
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: 0, instanceId: rng.randomBytes(count: 32),
                                   setupHash: rng.randomBytes(count: 32),
                                   mode: .importKey(importer: 0, publicKey: Secp256k1.Point(base: key + .one),
                                                    chainCode: rng.randomBytes(count: 32), privateKey: key))
        }
        // Parties that disagree on the imported key bind different key ids into ctx: the other
        // party's commitment does not open. (An importer whose polynomial constant differs from x
        // under the right ctx would fail the Feldman check against the implied P_imp — the same
        // check as a bad keygen share; no dedicated test yet.)
        let modes: [DKLsDKG.Mode] = [
            .importKey(importer: 0, publicKey: Secp256k1.Point(base: key), chainCode: [UInt8](repeating: 1, count: 32), privateKey: key),
            .importKey(importer: 0, publicKey: Secp256k1.Point(base: key + .one), chainCode: [UInt8](repeating: 1, count: 32), privateKey: nil),
        ]
        #expect(throws: ProtocolError.abort(party: 1, reason: .commitmentMismatch)) {
            _ = try DKLsInProcess.dkg(partyCount: 2, threshold: 2, modes: modes, using: &rng)
        }
    }
}
