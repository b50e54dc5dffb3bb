import Foundation
import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// The BIP340 variant of FROST over secp256k1 (docs/protocol/frost.md §18.3): threshold signatures
/// checked by libsecp256k1's `secp256k1_schnorrsig_verify`, with and without a BIP341 TapTweak.
@Suite("FROST(secp256k1) BIP340/BIP341 signing", .heavy)
struct FROSTSecp256k1BIP340Tests {
    typealias Suite = FROSTSecp256k1BIP340
    typealias Core = FROSTCore<FROSTSecp256k1BIP340>
    typealias Scalar = Secp256k1.Scalar
    typealias Point = Secp256k1.Point

    /// BIP340 test vector 0 (secret key 3, zero message and aux): our x-only key and libsecp256k1's
    /// verifier (wrapped in MPCCrypto) accept it, and reject it with one bit changed.
    @Test func bip340VectorZeroVerifies() throws {
        let key = try Hex.decode("f9308a019258c31049344f85f89d5229b531c845836f99b08601f113bce036f9")
        #expect(try Point(base: Scalar(3)).xOnly() == key)
        let sig = try Hex.decode("e907831f80848d1069a5371b402410364bdf1c5f8307b0084c55f1ce2dca8215"
                                 + "25f66a4a85ea8b71e482a74f382d2ce5ebeee8fdb2172f477df4900d310536c0")
        let message = [UInt8](repeating: 0, count: 32)
        #expect(Secp256k1.verifySchnorr(signature: sig, message: message, xOnlyKey: key))
        var flipped = sig
        flipped[63] ^= 1
        #expect(!Secp256k1.verifySchnorr(signature: flipped, message: message, xOnlyKey: key))
        #expect(!Secp256k1.verifySchnorr(signature: Array(sig.dropLast()), message: message, xOnlyKey: key))
    }

    /// BIP86's first receiving key (m/86'/0'/0'/0/0 of the "abandon … about" mnemonic): the TapTweak
    /// with an empty script tree maps its internal key to the published output key.
    @Test func bip86OutputKey() throws {
        let internalKey = try Point(xOnly: Hex.decode("cc8a4bc64d897bddc5fbc2f670f7a8ba0b386779106cf1223c6fc5d7cd6fc115"))
        for groupKey in [internalKey, -internalKey] {   // the parity of the group key does not matter
            let key = try Suite.SigningKey(groupKey: groupKey, tweak: .taproot(merkleRoot: nil))
            #expect(key.xOnlyKey == (try Hex.decode("a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c")))
            #expect(key.internalKey == internalKey)
        }
    }

    /// ZcashFoundation frost-secp256k1-tr's signing vector (`vectors/frost-secp256k1/zf-secp256k1-tr-vectors.json`):
    /// nonces, commitments, binding-factor inputs, binding factors, signature shares and the signature byte for
    /// byte. The file prints R in its 33-byte form (prefix 0x02: R has even y); the BIP340 signature is the
    /// same bytes without the prefix, and libsecp256k1 verifies it.
    @Test func zcashFoundationSecp256k1TRVector() throws {
        let url = FROSTSecp256k1Tests.directory.appendingPathComponent("zf-secp256k1-tr-vectors.json")
        let v = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let inputs = try #require(v["inputs"] as? [String: Any])
        let secret = try Scalar(bytes: frostHex(inputs["group_secret_key"]))
        let groupKey = try Suite.deserializeElement(frostHex(inputs["verifying_key_key"]))
        #expect(Point(base: secret) == groupKey)
        let key = try Suite.SigningKey(groupKey: groupKey)
        let message = try frostHex(inputs["message"])
        let coefficients = [secret] + (try #require(inputs["share_polynomial_coefficients"] as? [Any]).map { try Scalar(bytes: frostHex($0)) })
        var shares: [UInt32: Scalar] = [:]
        for entry in try #require(inputs["participant_shares"] as? [[String: Any]]) {
            let id = try frostIdentifier(entry["identifier"])
            shares[id.value] = try Scalar(bytes: frostHex(entry["participant_share"]))
            #expect(Core.evaluate(coefficients, at: Core.scalar(id)) == shares[id.value])
        }
        let round1 = try #require((v["round_one_outputs"] as? [String: Any])?["outputs"] as? [[String: Any]])
        var nonces: [UInt32: Core.SigningNonces] = [:]
        var commitments: [Core.SigningCommitment] = []
        for entry in round1 {
            let id = try frostIdentifier(entry["identifier"])
            let n = Core.SigningNonces(hidingRandomness: try frostHex(entry["hiding_nonce_randomness"]),
                                       bindingRandomness: try frostHex(entry["binding_nonce_randomness"]),
                                       secret: try #require(shares[id.value]))
            #expect(n.hiding.bytes == (try frostHex(entry["hiding_nonce"])))
            #expect(n.binding.bytes == (try frostHex(entry["binding_nonce"])))
            let c = n.commitment(for: id)
            #expect(try c.hiding.compressed() == (try frostHex(entry["hiding_nonce_commitment"])))
            #expect(try c.binding.compressed() == (try frostHex(entry["binding_nonce_commitment"])))
            nonces[id.value] = n
            commitments.append(c)
        }
        let package = try Core.SigningPackage(groupKey: key.key, commitments: commitments, message: message)
        for (index, entry) in round1.enumerated() {
            let id = try frostIdentifier(entry["identifier"])
            #expect(package.transcriptPrefix + Core.scalar(id).bytes == (try frostHex(entry["binding_factor_input"])))
            #expect(package.bindingFactors[index].bytes == (try frostHex(entry["binding_factor"])))
        }
        var ordered: [Scalar] = []
        for entry in try #require((v["round_two_outputs"] as? [String: Any])?["outputs"] as? [[String: Any]]) {
            let id = try frostIdentifier(entry["identifier"])
            let share = try #require(shares[id.value])
            let z = try package.signatureShare(identifier: id, secretShare: key.signingShare(share),
                                               nonces: try #require(nonces[id.value]))
            #expect(z.bytes == (try frostHex(entry["sig_share"])))
            ordered.append(z)
        }
        let printed = try frostHex((v["final_output"] as? [String: Any])?["sig"])
        #expect(printed.first == 0x02 && printed.count == 65)
        let signature = package.aggregate(ordered)
        #expect(signature == Array(printed.dropFirst()))
        #expect(Secp256k1.verifySchnorr(signature: signature, message: message, xOnlyKey: key.xOnlyKey))
    }

    /// A dealer split of a random key: (group key, shares by identifier).
    func dealer(threshold: Int, parties: Int, rng: inout DeterministicRandom) -> (Point, [FROST.Identifier: Scalar]) {
        let coefficients = (0..<threshold).map { _ in Scalar.random(using: &rng) }
        var shares: [FROST.Identifier: Scalar] = [:]
        for party in 0..<parties {
            let id = FROST.Identifier(party: PartyIndex(party))
            shares[id] = Core.evaluate(coefficients, at: Core.scalar(id))
        }
        return (Point(base: coefficients[0]), shares)
    }

    /// One threshold signing in process: round one, package, shares (each checked), aggregate.
    func sign(_ message: [UInt8], signers: [FROST.Identifier], shares: [FROST.Identifier: Scalar],
              key: Suite.SigningKey, rng: inout DeterministicRandom) throws -> (signature: [UInt8], negated: Bool) {
        var nonces: [FROST.Identifier: Core.SigningNonces] = [:]
        var commitments: [Core.SigningCommitment] = []
        for id in signers {
            let n = Core.SigningNonces(secret: try #require(shares[id]), using: &rng)
            nonces[id] = n
            // Through the wire encoding, as a co-signer would receive it.
            let c = n.commitment(for: id)
            let wire = try Suite.serialize(c.hiding) + (try Suite.serialize(c.binding))
            commitments.append(try Core.SigningCommitment(identifier: id, bytes: wire, from: nil))
        }
        var zs: [FROST.Identifier: Scalar] = [:]
        var verifying: [FROST.Identifier: Point] = [:]
        var package: Core.SigningPackage?
        for id in signers {
            let p = try Core.SigningPackage(groupKey: key.key, commitments: commitments, message: message,
                                            ownNonces: (id, try #require(nonces[id])))
            let share = try #require(shares[id])
            let z = try p.signatureShare(identifier: id, secretShare: key.signingShare(share), nonces: try #require(nonces[id]))
            verifying[id] = key.verifyingShare(Point(base: share))
            #expect(try p.verifySignatureShare(z, identifier: id, verifyingShare: try #require(verifying[id])))
            zs[id] = z
            package = p
        }
        let p = try #require(package)
        let signature = try p.aggregate(shares: zs, verifyingShares: verifying)
        // A corrupted share is named (identifier − 1 = party).
        var bad = zs
        let last = try #require(signers.last)
        bad[last] = try #require(bad[last]) + .one
        #expect(throws: ProtocolError.signingFailed(party: last.party, reason: .invalidSignatureShare)) {
            try p.aggregate(shares: bad, verifyingShares: verifying)
        }
        return (signature, p.negatesNonces)
    }

    /// 2-of-2 and 2-of-3 (every signer pair and the full set), without a tweak, with a BIP86 TapTweak
    /// and with a Merkle root; every signature verified by `secp256k1_schnorrsig_verify` under the
    /// (tweaked) x-only key and refused under the other keys and another message. Enough keys and
    /// messages that odd-y group keys, odd-y R and odd-y output keys all occur.
    @Test func thresholdSignaturesVerifyWithLibsecp256k1() throws {
        var rng = DeterministicRandom(seed: 0xB1_9340)
        var oddGroupKeys = 0, negatedNonces = 0, oddOutputKeys = 0, signatures = 0
        for (t, n) in [(2, 2), (2, 3)] {
            var sets: [[Int]] = []
            for a in 0..<n { for b in (a + 1)..<n { sets.append([a, b]) } }
            if n > 2 { sets.append(Array(0..<n)) }
            for _ in 0..<4 {
                let (groupKey, shares) = dealer(threshold: t, parties: n, rng: &rng)
                if !groupKey.hasEvenY { oddGroupKeys += 1 }
                let root = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let plain = try Suite.SigningKey(groupKey: groupKey)
                let tweaks: [Suite.Tweak] = [.none, .taproot(merkleRoot: nil), .taproot(merkleRoot: root)]
                let keys = try tweaks.map { try Suite.SigningKey(groupKey: groupKey, tweak: $0) }
                for key in keys where key.tweak != .zero {
                    let q = plain.key + Point(base: key.tweak)
                    if !q.hasEvenY { oddOutputKeys += 1 }
                    #expect(try key.xOnlyKey == q.xOnly())
                }
                for key in keys {
                    for set in sets {
                        let message = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
                        let ids = set.map { FROST.Identifier(party: PartyIndex($0)) }
                        let (signature, negated) = try sign(message, signers: ids, shares: shares, key: key, rng: &rng)
                        if negated { negatedNonces += 1 }
                        signatures += 1
                        #expect(signature.count == 64)
                        #expect(Secp256k1.verifySchnorr(signature: signature, message: message, xOnlyKey: key.xOnlyKey))
                        #expect(!Secp256k1.verifySchnorr(signature: signature, message: message + [0], xOnlyKey: key.xOnlyKey))
                        for other in keys where other.key != key.key {
                            #expect(!Secp256k1.verifySchnorr(signature: signature, message: message, xOnlyKey: other.xOnlyKey))
                        }
                    }
                }
            }
        }
        #expect(signatures == 3 * 4 * (1 + 4))
        #expect(oddGroupKeys > 0 && negatedNonces > 0 && oddOutputKeys > 0)
    }

    /// BIP341 failure cases and input checks of the key mapping.
    @Test func signingKeyRefusals() throws {
        let key = Point(base: Scalar(11))
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) { try Suite.SigningKey(groupKey: .identity) }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try Suite.SigningKey(groupKey: key, tweak: .taproot(merkleRoot: [1, 2, 3]))
        }
        // Without a tweak the signing key is the even-y lift: for an odd-y key it is −P.
        let odd = try #require([key, -key].first { !$0.hasEvenY })
        let mapped = try Suite.SigningKey(groupKey: odd)
        #expect(mapped.key == -odd && mapped.key.hasEvenY && mapped.tweak == .zero)
        #expect(mapped.signingShare(Scalar(5)) == -Scalar(5))
    }
}
