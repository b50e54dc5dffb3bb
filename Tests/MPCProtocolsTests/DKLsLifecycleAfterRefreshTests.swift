import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// Hard derivation and export combined with the DKG modes of dkls23.md §12.6–12.7 (needs both branches).
@Suite("DKLs23 hard derivation and export after refresh, recovery and import", .heavy)
struct DKLsLifecycleAfterRefreshTests {
    static func refreshModes(_ keyshares: [DKLsKeyshare], holders: [PartyIndex], lost: Set<PartyIndex> = [])
        -> [DKLsDKG.Mode] {
        keyshares.map { keyshare in
            .refresh(holders: holders, keyshare: lost.contains(keyshare.partyIndex) ? nil : keyshare,
                     expectedPublicKey: keyshare.publicKey)
        }
    }

    @Test func sameHardChildAfterRefreshAndRecovery() throws {
        let old = try DKLsHarness.keygen(n: 3, t: 2, seed: 700)
        var rng = DeterministicRandom(seed: 701)
        let path = try DerivationPath("m/44'/60'/0'/0/1", allowHardened: true)
        let before = try DKLsInProcess.hardDerive([old[0], old[1]], path: path, using: &rng)
        let refreshed = try DKLsInProcess.dkg(partyCount: 3, threshold: 2,
                                              modes: Self.refreshModes(old, holders: [0, 1, 2]), using: &rng)
        let afterRefresh = try DKLsInProcess.hardDerive([refreshed[1], refreshed[2]], path: path, using: &rng)
        let recovered = try DKLsInProcess.dkg(partyCount: 3, threshold: 2,
                                              modes: Self.refreshModes(refreshed, holders: [1, 2], lost: [0]), using: &rng)
        let afterRecovery = try DKLsInProcess.hardDerive([recovered[0], recovered[2]], path: path, using: &rng)
        for children in [afterRefresh, afterRecovery] {
            #expect(children[0].publicKey == before[0].publicKey)
            #expect(children[0].rootChainCode == before[0].rootChainCode)
            #expect(children[0].keyId == before[0].keyId)
            #expect(children[0].generation != before[0].generation)   // new parent generation ⇒ new child generation
        }
        let hash = SHA256.hash(Array("after recovery".utf8))
        let signature = try DKLsInProcess.sign(afterRecovery, messageHash: hash, using: &rng)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: before[0].publicKey))
        // Old-generation child shares and new ones do not mix (the child of the old generation is stale).
        #expect(throws: ProtocolError.abort(party: 2, reason: .sessionMismatch)) {
            _ = try DKLsInProcess.sign([before[0], afterRecovery[1]], messageHash: hash, using: &rng)
        }
    }

    @Test func importThenExportReturnsTheImportedKey() throws {
        var rng = DeterministicRandom(seed: 710)
        let key = Secp256k1.Scalar.random(using: &rng)
        let publicKey = Secp256k1.Point(base: key), chainCode = rng.randomBytes(count: 32)
        let modes: [DKLsDKG.Mode] = (0..<3).map { i in
            .importKey(importer: 0, publicKey: publicKey, chainCode: chainCode, privateKey: i == 0 ? key : nil)
        }
        let keyshares = try DKLsInProcess.dkg(partyCount: 3, threshold: 2, modes: modes, using: &rng)
        let exported = try DKLsInProcess.export(receiver: keyshares[0], exporters: [keyshares[1], keyshares[2]],
                                                receiverInSet: false, using: &rng)
        #expect(exported.privateKey == key && exported.chainCode == chainCode)
        let again = try DKLsInProcess.export(receiver: keyshares[2], exporters: [keyshares[1]], receiverInSet: true, using: &rng)
        #expect(again == exported)
    }
}
