import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

@Suite("FROST DKG vector, repair, import, export", .heavy)
struct FROSTKeyManagementTests {
    /// ZcashFoundation `vectors_dkg.json`: commitments, proofs of knowledge, every share passes the
    /// Feldman check, final signing and verifying shares, group key.
    @Test func zcashFoundationDKGVector() throws {
        let inputs = try #require(try FROSTVectors.load("vectors_dkg.json")["inputs"] as? [String: Any])
        let ids = ["1", "2", "3"]
        var parties: [String: [String: Any]] = [:]
        for k in ids { parties[k] = try #require(inputs[k] as? [String: Any]) }
        var group = Ed25519.Point.identity
        var secret = Ed25519.Scalar.zero
        for k in ids {
            let p = try #require(parties[k])
            let id = try frostIdentifier(p["identifier"])
            let coefficients = [try frostScalar(p["signing_key"]), try frostScalar(p["coefficient"])]
            let commitments = try #require(p["vss_commitments"] as? [Any]).map { try frostPoint($0) }
            #expect(FROST.DKG.commitments(coefficients) == commitments)
            let proof = try frostHex(p["proof_of_knowledge"])
            let r = try Ed25519.Point(bytes: proof[0..<32])
            let mu = try Ed25519.Scalar(bytes: proof[32..<64])
            #expect(FROST.DKG.verifyProofOfKnowledge(r: r, mu: mu, identifier: id, commitment: commitments[0], context: []))
            #expect(!FROST.DKG.verifyProofOfKnowledge(r: r, mu: mu, identifier: id, commitment: commitments[0], context: [0]))
            // The proof does not transfer to another identifier.
            let other = try #require(FROST.Identifier(value: id.value % 3 + 1))
            #expect(!FROST.DKG.verifyProofOfKnowledge(r: r, mu: mu, identifier: other, commitment: commitments[0], context: []))
            // Our prover produces proofs the same verifier accepts.
            let ours = FROST.DKG.proofOfKnowledge(identifier: id, secret: coefficients[0], nonce: .one + .one, context: [])
            #expect(FROST.DKG.verifyProofOfKnowledge(r: ours.r, mu: ours.mu, identifier: id, commitment: commitments[0], context: []))
            group += commitments[0]
            secret += coefficients[0]
        }
        #expect(group == (try frostPoint(inputs["verifying_key"])))
        #expect(Ed25519.Point(base: secret) == group)
        for k in ids {
            let p = try #require(parties[k])
            let id = try frostIdentifier(p["identifier"])
            var share = FROST.DKG.share([try frostScalar(p["signing_key"]), try frostScalar(p["coefficient"])], for: id)
            // `signing_shares[j]` in party k's entry is what k received from j: f_j(x_k).
            let received = try #require(p["signing_shares"] as? [String: Any])
            for j in ids where j != k {
                let sender = try #require(parties[j])
                let coefficients = [try frostScalar(sender["signing_key"]), try frostScalar(sender["coefficient"])]
                let commitments = try #require(sender["vss_commitments"] as? [Any]).map { try frostPoint($0) }
                let value = try frostScalar(received[j])
                #expect(FROST.DKG.share(coefficients, for: id) == value)
                #expect(FROST.DKG.verifyShare(value, for: id, commitments: commitments))
                #expect(!FROST.DKG.verifyShare(value + .one, for: id, commitments: commitments))
                share += value
            }
            #expect(share == (try frostScalar(p["signing_share"])))
            #expect(Ed25519.Point(base: share) == (try frostPoint(p["verifying_share"])))
        }
    }

    /// ZcashFoundation `repair-share.json` fixes only sums of given random summands (steps 1 and 3), so this
    /// checks the summation; full repairs are tested below.
    @Test func repairShareVector() throws {
        let v = try FROSTVectors.load("repair-share.json")
        let generation = try #require(v["scalar_generation"] as? [String: Any])
        let randoms = try (1...3).map { try frostScalar(generation["random_scalar_\($0)"]) }
        #expect(FROST.Repair.sum(randoms) == (try frostScalar(generation["random_scalar_sum"])))
        let sigmaGeneration = try #require(v["sigma_generation"] as? [String: Any])
        let sigmas = try (1...4).map { try frostScalar(sigmaGeneration["sigma_\($0)"]) }
        #expect(FROST.Repair.sum(sigmas) == (try frostScalar(sigmaGeneration["sigma_sum"])))
    }

    @Test(arguments: [(UInt8(2), UInt8(3), UInt8(1)), (3, 5, 4), (2, 4, 0)])
    func repairLostShare(t: UInt8, n: UInt8, lost: UInt8) throws {
        var rng = DeterministicRandom(seed: 21)
        let shares = try FROST.LocalRun.keygen(threshold: t, parties: n, using: &rng)
        let helpers = Array((0..<n).filter { $0 != lost }.prefix(Int(t)))
        var machines = try helpers.map { try FROST.RepairHelper(keyshare: shares[Int($0)], helpers: helpers, lost: lost, using: &rng) }
        for (a, i) in helpers.enumerated() {
            for (b, j) in helpers.enumerated() where a != b {
                try machines[b].receiveStep1(try #require(machines[a].step1Messages[j]), from: i)
            }
        }
        let s = shares[0]
        var recipient = try FROST.RepairRecipient(party: lost, helpers: helpers, threshold: t, parties: n, publicKey: s.publicKey,
                                                  generation: s.generation, chainCode: s.chainCode, verifyingShares: s.verifyingShares)
        let sigmas = try machines.map { try $0.step2Message() }
        // A wrong σ is caught by the verifying-share check.
        var broken = recipient
        for (a, i) in helpers.enumerated() { try broken.receiveStep2(a == 0 ? (Ed25519.Scalar.one).bytes : sigmas[a], from: i) }
        #expect(throws: ProtocolError.abort(party: nil, reason: .invalidShare)) { try broken.finish() }
        for (a, i) in helpers.enumerated() { try recipient.receiveStep2(sigmas[a], from: i) }
        #expect(throws: ProtocolError.abort(party: helpers[0], reason: .duplicateMessage)) { try recipient.receiveStep2(sigmas[0], from: helpers[0]) }
        let repaired = try recipient.finish()
        #expect(repaired == shares[Int(lost)])
    }

    @Test func importSeedAndScalarThenExport() throws {
        var rng = DeterministicRandom(seed: 31)
        let seed = FROST.randomBytes(32, using: &rng)
        let libsodiumKey = try Ed25519.SigningKey(seed: seed).verifyingKey
        let x = try FROST.secretScalar(fromSeed: seed)
        #expect(Ed25519.Point(base: x).bytes == libsodiumKey.bytes)
        let chainCode = FROST.randomBytes(32, using: &rng)
        for (t, n, importer) in [(UInt8(2), UInt8(2), UInt8(0)), (2, 3, 2), (3, 5, 1)] {
            for secret in [x, Ed25519.Scalar.random(using: &rng)] {
                let publicKey = Ed25519.Point(base: secret)
                let shares = try FROST.LocalRun.keyGeneration(
                    threshold: t, parties: n, sessionId: FROST.randomBytes(32, using: &rng),
                    mode: { i in .importKey(try! FROST.ImportedKey(importer: importer, publicKey: publicKey, chainCode: chainCode,
                                                                   secret: i == importer ? secret : nil)) },
                    using: &rng)
                #expect(shares.allSatisfy { $0.publicKey == publicKey && $0.chainCode == chainCode })
                let message: [UInt8] = [1, 2, 3, 4]
                let signature = try FROST.LocalRun.sign(shares, signers: Array(0..<t), message: message, using: &rng)
                #expect(try Ed25519.VerifyingKey(bytes: publicKey.bytes).isValidSignature(signature, for: message))
                // Export at the last party from t − 1 others.
                let receiver = shares[Int(n - 1)]
                var messages: [PartyIndex: [UInt8]] = [:]
                for k in 0..<(t - 1) { messages[k] = FROST.Export.shareMessage(shares[Int(k)]) }
                #expect(try FROST.Export.reconstruct(receiver, messages: messages) == secret)
                messages[0] = (shares[0].secretShare + .one).bytes
                #expect(throws: ProtocolError.abort(party: 0, reason: .invalidShare)) {
                    try FROST.Export.reconstruct(receiver, messages: messages)
                }
                if t > 2 {
                    messages[0] = nil
                    #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) {
                        try FROST.Export.reconstruct(receiver, messages: messages)
                    }
                }
            }
        }
        // The importer's secret must match the public key.
        #expect(throws: ProtocolError.invalidInput(.publicKeyMismatch)) {
            try FROST.ImportedKey(importer: 0, publicKey: Ed25519.Point(base: x), chainCode: chainCode, secret: x + .one)
        }
    }

    @Test func keyshareDecodingIsStrict() throws {
        var rng = DeterministicRandom(seed: 41)
        let share = try FROST.LocalRun.keygen(threshold: 2, parties: 3, using: &rng)[1]
        let bytes = share.encoded
        #expect(bytes.count == 356)
        #expect(!share.description.contains(Hex.encode(share.secretShare.bytes)))
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try FROST.Keyshare(encoded: bytes + [0]) }
        #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try FROST.Keyshare(encoded: Array(bytes.dropLast())) }
        // Every byte but the generation id (36..<68) and the chain code (100..<132), which only the storage AEAD protects.
        for offset in [0, 1, 2, 3, 4, 35, 68, 99, 132, 140, 163, 164, 170, 200, 240, 300, 355] {
            var corrupted = bytes
            corrupted[offset] ^= 0x01
            #expect(throws: ProtocolError.invalidInput(.invalidKeyshare)) { try FROST.Keyshare(encoded: corrupted) }
        }
    }
}
