import Foundation
import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// FROST(secp256k1, SHA-256) (RFC 9591 §6.5) through the generic core: the RFC's Appendix E.5 vector
/// byte for byte, and strict decoding of elements and scalars from outside.
@Suite("FROST(secp256k1, SHA-256): RFC 9591 vector and encodings", .heavy)
struct FROSTSecp256k1Tests {
    typealias Core = FROSTCore<FROSTSecp256k1>
    typealias Scalar = Secp256k1.Scalar
    typealias Point = Secp256k1.Point

    static var directory: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("vectors/frost-secp256k1")
    }

    static func load(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(name))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func scalar(_ value: Any?) throws -> Scalar { try Scalar(bytes: frostHex(value)) }

    /// Shares from the given polynomial, nonces from the given randomness, commitments, binding-factor
    /// inputs, binding factors, signature shares and the signature byte for byte; the signature verifies
    /// (RFC 9591 Appendix B) and a changed message does not.
    @Test func rfc9591Secp256k1Vector() throws {
        let v = try Self.load("rfc9591-secp256k1-sha256.json")
        let inputs = try #require(v["inputs"] as? [String: Any])
        let secret = try scalar(inputs["group_secret_key"])
        let groupKey = try FROSTSecp256k1.deserializeElement(frostHex(inputs["group_public_key"]))
        #expect(Point(base: secret) == groupKey)
        let message = try frostHex(inputs["message"])
        let coefficients = [secret] + (try #require(inputs["share_polynomial_coefficients"] as? [Any]).map { try scalar($0) })
        var shares: [UInt32: Scalar] = [:]
        for entry in try #require(inputs["participant_shares"] as? [[String: Any]]) {
            let id = try frostIdentifier(entry["identifier"])
            let share = try scalar(entry["participant_share"])
            #expect(Core.evaluate(coefficients, at: Core.scalar(id)) == share)
            shares[id.value] = share
        }
        let round1 = try #require((v["round_one_outputs"] as? [String: Any])?["outputs"] as? [[String: Any]])
        var nonces: [UInt32: Core.SigningNonces] = [:]
        var commitments: [Core.SigningCommitment] = []
        for entry in round1 {
            let id = try frostIdentifier(entry["identifier"])
            let share = try #require(shares[id.value])
            let n = Core.SigningNonces(hidingRandomness: try frostHex(entry["hiding_nonce_randomness"]),
                                       bindingRandomness: try frostHex(entry["binding_nonce_randomness"]), secret: share)
            #expect(n.hiding.bytes == (try frostHex(entry["hiding_nonce"])))
            #expect(n.binding.bytes == (try frostHex(entry["binding_nonce"])))
            let c = n.commitment(for: id)
            #expect(try c.hiding.compressed() == (try frostHex(entry["hiding_nonce_commitment"])))
            #expect(try c.binding.compressed() == (try frostHex(entry["binding_nonce_commitment"])))
            // The wire decoding gives the same commitment.
            let wire = try frostHex(entry["hiding_nonce_commitment"]) + (try frostHex(entry["binding_nonce_commitment"]))
            #expect(try Core.SigningCommitment(identifier: id, bytes: wire, from: nil) == c)
            nonces[id.value] = n
            commitments.append(c)
        }
        let package = try Core.SigningPackage(groupKey: groupKey, commitments: commitments, message: message)
        for c in commitments {
            let fast = try Core.SigningPackage(groupKey: groupKey, commitments: commitments, message: message,
                                               ownNonces: (c.identifier, try #require(nonces[c.identifier.value])))
            #expect(fast.groupCommitment == package.groupCommitment)
        }
        #expect(!package.negatesNonces)
        for (index, entry) in round1.enumerated() {
            let id = try frostIdentifier(entry["identifier"])
            #expect(package.transcriptPrefix + Core.scalar(id).bytes == (try frostHex(entry["binding_factor_input"])))
            #expect(package.bindingFactors[index].bytes == (try frostHex(entry["binding_factor"])))
        }
        var sigShares: [FROST.Identifier: Scalar] = [:]
        var verifying: [FROST.Identifier: Point] = [:]
        var ordered: [Scalar] = []
        for entry in try #require((v["round_two_outputs"] as? [String: Any])?["outputs"] as? [[String: Any]]) {
            let id = try frostIdentifier(entry["identifier"])
            let share = try #require(shares[id.value])
            let z = try package.signatureShare(identifier: id, secretShare: share, nonces: try #require(nonces[id.value]))
            #expect(z.bytes == (try frostHex(entry["sig_share"])))
            #expect(try package.verifySignatureShare(z, identifier: id, verifyingShare: Point(base: share)))
            #expect(try !package.verifySignatureShare(z + .one, identifier: id, verifyingShare: Point(base: share)))
            sigShares[id] = z
            verifying[id] = Point(base: share)
            ordered.append(z)
        }
        let expected = try frostHex((v["final_output"] as? [String: Any])?["sig"])
        #expect(package.aggregate(ordered) == expected)
        #expect(try package.aggregate(shares: sigShares, verifyingShares: verifying) == expected)
        #expect(FROSTSecp256k1.verify(signature: expected, message: message, groupKey: groupKey))
        #expect(!FROSTSecp256k1.verify(signature: expected, message: message + [0], groupKey: groupKey))
        // A bad share is named by the fallback (identifier 3 = party 2).
        var bad = sigShares
        let three = try #require(FROST.Identifier(value: 3))
        bad[three] = try #require(bad[three]) + .one
        #expect(throws: ProtocolError.signingFailed(party: 2, reason: .invalidSignatureShare)) {
            try package.aggregate(shares: bad, verifyingShares: verifying)
        }
    }

    /// Every element and scalar from outside is validated: wrong length, bad prefix, uncompressed or
    /// hybrid forms, x ≥ p, x with no point, and scalars ≥ n; the identity has no encoding.
    @Test func strictDecoding() throws {
        var rng = DeterministicRandom(seed: 256)
        let g = try Point.generator.compressed()
        #expect(try FROSTSecp256k1.deserializeElement(g) == Point.generator)
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.serialize(Point.identity) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement(Array(g.dropLast())) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement(g + [0]) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement([0x04] + Array(g.dropFirst())) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement([0x00] + [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement(try Point.generator.uncompressed()) }
        // x = p (non-canonical: ≥ p) and x = 5 (x³ + 7 = 132 is not a square mod p).
        let p = try Hex.decode("fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f")
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement([0x02] + p) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeElement([0x02] + [UInt8](repeating: 0, count: 31) + [5]) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeScalar(Scalar.orderBytes) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeScalar([UInt8](repeating: 0xff, count: 32)) }
        #expect(throws: CryptoError.self) { try FROSTSecp256k1.deserializeScalar([UInt8](repeating: 1, count: 31)) }
        let one = try #require(FROST.Identifier(value: 1))
        #expect(throws: ProtocolError.abort(party: 4, reason: .malformedMessage)) {
            try Core.SigningCommitment(identifier: one, bytes: g + [0x02] + p, from: 4)
        }
        #expect(throws: ProtocolError.abort(party: 4, reason: .malformedMessage)) {
            try Core.SigningCommitment(identifier: one, bytes: g, from: 4)
        }
        // A group key without encoding is the caller's error; duplicate identifiers are refused.
        let c = Core.SigningNonces(secret: Scalar(9), using: &rng).commitment(for: one)
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try Core.SigningPackage(groupKey: .identity, commitments: [c], message: [])
        }
        #expect(throws: ProtocolError.invalidInput(.collidingEvaluationPoints)) {
            try Core.SigningPackage(groupKey: .generator, commitments: [c, c], message: [])
        }
        // A signature with R off the curve or z ≥ n does not verify.
        let key = Point(base: Scalar(7))
        #expect(!FROSTSecp256k1.verify(signature: [0x02] + p + Array(repeating: 1, count: 32), message: [], groupKey: key))
        #expect(!FROSTSecp256k1.verify(signature: g + Scalar.orderBytes, message: [], groupKey: key))
    }
}
