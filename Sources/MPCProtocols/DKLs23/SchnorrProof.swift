import MPCCrypto

/// Schnorr proof of knowledge of x with X = x·G, Fiat–Shamir over `ctx` and a label (dkls23.md §6.4), 64 bytes.
enum SchnorrProof {
    static let size = 64

    static func prove<R: RandomNumberGenerator>(context: [UInt8], label: [UInt8], secret: Secp256k1.Scalar,
                                                publicPoint: Secp256k1.Point, using rng: inout R) throws(ProtocolError) -> [UInt8] {
        let k = Secp256k1.Scalar.random(using: &rng)
        let commitment = Secp256k1.Point(base: k)
        let challenge = DKLsHash.hq("pok/schnorr", context, label, try DKLsHash.enc(publicPoint), try DKLsHash.enc(commitment))
        return challenge.bytes + (k + challenge * secret).bytes
    }

    /// Verifies a proof received from `sender` (any failure is Abort(sender)).
    static func verify(_ proof: [UInt8], context: [UInt8], label: [UInt8], publicPoint: Secp256k1.Point,
                       from sender: PartyIndex) throws(ProtocolError) {
        var reader = ByteReader(proof, from: sender)
        let challenge = try reader.readSecp256k1Scalar()
        let response = try reader.readSecp256k1Scalar()
        try reader.finish()
        let commitment = Secp256k1.Point(base: response) - challenge * publicPoint
        guard !commitment.isIdentity, let encodedX = try? DKLsHash.enc(publicPoint),
              let encodedT = try? DKLsHash.enc(commitment),
              DKLsHash.hq("pok/schnorr", context, label, encodedX, encodedT) == challenge
        else { throw .abort(party: sender, reason: .invalidProof) }
    }
}
