import MPCCrypto

/// Chaum–Pedersen proof of equality of discrete logarithms, Fiat–Shamir over `ctx` and a label
/// (dkls23.md §6.5), 64 bytes: for public G, H, A, B it shows A = e·G and B = e·H for one secret e.
///
/// Assumes SHA-512 (inside Hq) behaves as a random oracle.
enum DLEQProof {
    static let size = 64

    /// Proves knowledge of `secret` with A = secret·G and B = secret·H. The nonce k is fresh from `rng`;
    /// both secret × point products are constant time.
    static func prove<R: RandomNumberGenerator>(context: [UInt8], label: [UInt8], secret: Secp256k1.Scalar,
                                                base: Secp256k1.Point, a: Secp256k1.Point, b: Secp256k1.Point,
                                                using rng: inout R) throws(ProtocolError) -> [UInt8] {
        let k = Secp256k1.Scalar.random(using: &rng)
        let t1 = Secp256k1.Point(base: k), t2 = k * base
        let challenge = try self.challenge(context: context, label: label, base: base, a: a, b: b, t1: t1, t2: t2)
        return challenge.bytes + (k + challenge * secret).bytes
    }

    /// Verifies a proof received from `sender`; any failure (undecodable scalar, T1′ or T2′ = O, wrong
    /// challenge) is `Abort(sender, invalidProof)`.
    static func verify(_ proof: [UInt8], context: [UInt8], label: [UInt8], base: Secp256k1.Point,
                       a: Secp256k1.Point, b: Secp256k1.Point, from sender: PartyIndex) throws(ProtocolError) {
        let invalid = ProtocolError.abort(party: sender, reason: .invalidProof)
        guard proof.count == size, let c = try? Secp256k1.Scalar(bytes: proof[0..<32]),
              let z = try? Secp256k1.Scalar(bytes: proof[32..<64])
        else { throw invalid }
        let t1 = Secp256k1.Point(base: z) - c * a
        let t2 = z * base - c * b
        guard !t1.isIdentity, !t2.isIdentity,
              let expected = try? challenge(context: context, label: label, base: base, a: a, b: b, t1: t1, t2: t2),
              expected == c
        else { throw invalid }
    }

    /// c = Hq("pok/dleq"; ctx, label, enc(H), enc(A), enc(B), enc(T1), enc(T2)).
    private static func challenge(context: [UInt8], label: [UInt8], base: Secp256k1.Point, a: Secp256k1.Point,
                                  b: Secp256k1.Point, t1: Secp256k1.Point, t2: Secp256k1.Point) throws(ProtocolError)
        -> Secp256k1.Scalar {
        DKLsHash.hq("pok/dleq", context, label, try DKLsHash.enc(base), try DKLsHash.enc(a), try DKLsHash.enc(b),
                    try DKLsHash.enc(t1), try DKLsHash.enc(t2))
    }
}
