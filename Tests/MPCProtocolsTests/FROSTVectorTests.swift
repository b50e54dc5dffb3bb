import Foundation
import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

@Suite("FROST test vectors (RFC 9591, ZcashFoundation)", .heavy)
struct FROSTVectorTests {
    /// Runs a signing vector: shares from the polynomial, nonces from the given randomness, binding
    /// factors, shares and the final signature byte for byte; the signature verifies with libsodium.
    func runSigningVector(_ name: String) throws {
        let v = try FROSTVectors.load(name)
        let inputs = try #require(v["inputs"] as? [String: Any])
        let secret = try frostScalar(inputs["group_secret_key"])
        let groupKeyHex = inputs["group_public_key"] ?? inputs["verifying_key_key"]
        let groupKey = try frostPoint(groupKeyHex)
        #expect(Ed25519.Point(base: secret) == groupKey)
        let message = try frostHex(inputs["message"])
        let coefficients = [secret] + (try #require(inputs["share_polynomial_coefficients"] as? [Any]).map { try frostScalar($0) })
        var shares: [UInt32: Ed25519.Scalar] = [:]
        for entry in try #require(inputs["participant_shares"] as? [[String: Any]]) {
            let id = try frostIdentifier(entry["identifier"])
            let share = try frostScalar(entry["participant_share"])
            #expect(FROST.evaluate(coefficients, at: id.scalar) == share)
            shares[id.value] = share
        }
        let round1 = try #require((v["round_one_outputs"] as? [String: Any])?["outputs"] as? [[String: Any]])
        var nonces: [UInt32: FROST.SigningNonces] = [:]
        var commitments: [FROST.SigningCommitment] = []
        for entry in round1 {
            let id = try frostIdentifier(entry["identifier"])
            let share = try #require(shares[id.value] ?? (id.value > 3 ? FROST.evaluate(coefficients, at: id.scalar) : nil))
            let n = FROST.SigningNonces(hidingRandomness: try frostHex(entry["hiding_nonce_randomness"]),
                                        bindingRandomness: try frostHex(entry["binding_nonce_randomness"]), secret: share)
            #expect(n.hiding.bytes == (try frostHex(entry["hiding_nonce"])))
            #expect(n.binding.bytes == (try frostHex(entry["binding_nonce"])))
            let c = n.commitment(for: id)
            #expect(c.hiding.bytes == (try frostHex(entry["hiding_nonce_commitment"])))
            #expect(c.binding.bytes == (try frostHex(entry["binding_nonce_commitment"])))
            nonces[id.value] = n
            commitments.append(c)
        }
        let package = try FROST.SigningPackage(groupKey: groupKey, commitments: commitments, message: message)
        // The shortcut for a signer's own term gives the same group commitment.
        for c in commitments {
            let fast = try FROST.SigningPackage(groupKey: groupKey, commitments: commitments, message: message,
                                                ownNonces: (c.identifier, try #require(nonces[c.identifier.value])))
            #expect(fast.groupCommitment == package.groupCommitment)
        }
        for (index, entry) in round1.enumerated() {
            let id = try frostIdentifier(entry["identifier"])
            #expect(package.transcriptPrefix + id.scalar.bytes == (try frostHex(entry["binding_factor_input"])))
            #expect(package.bindingFactors[index].bytes == (try frostHex(entry["binding_factor"])))
        }
        var sigShares: [Ed25519.Scalar] = []
        for entry in try #require((v["round_two_outputs"] as? [String: Any])?["outputs"] as? [[String: Any]]) {
            let id = try frostIdentifier(entry["identifier"])
            let share = shares[id.value] ?? FROST.evaluate(coefficients, at: id.scalar)
            let z = try package.signatureShare(identifier: id, secretShare: share, nonces: try #require(nonces[id.value]))
            #expect(z.bytes == (try frostHex(entry["sig_share"])))
            #expect(try package.verifySignatureShare(z, identifier: id, verifyingShare: Ed25519.Point(base: share)))
            sigShares.append(z)
        }
        let signature = package.aggregate(sigShares)
        #expect(signature == (try frostHex((v["final_output"] as? [String: Any])?["sig"])))
        #expect(try Ed25519.VerifyingKey(bytes: groupKey.bytes).isValidSignature(signature, for: message))
    }

    @Test func rfc9591Ed25519() throws { try runSigningVector("rfc9591-ed25519-sha512.json") }
    @Test func zcashFoundationSign() throws { try runSigningVector("vectors.json") }
    @Test func zcashFoundationBigIdentifier() throws { try runSigningVector("vectors-big-identifier.json") }
}
