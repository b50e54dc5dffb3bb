import MPCCrypto

extension FROST {
    /// The Ed25519 secret scalar of an RFC 8032 seed (§5.1.5): SHA-512(seed), the first 32 bytes
    /// clamped (clear bits 0–2 and 255, set bit 254), read little-endian, reduced mod ℓ. The
    /// signature nonce prefix (the second half) is not used by FROST. The seed must be 32 bytes.
    public static func secretScalar(fromSeed seed: [UInt8]) throws(ProtocolError) -> Scalar {
        guard seed.count == 32 else { throw .invalidInput(.invalidParameters) }
        var h = Array(SHA512.hash(seed)[0..<32])
        h[0] &= 248
        h[31] &= 127
        h[31] |= 64
        let scalar = FROST.reduce(h + [UInt8](repeating: 0, count: 32))
        guard !scalar.isZero else { throw .invalidInput(.zeroScalar) }
        return scalar
    }

    /// Export: each exporting party sends its share to the receiver (P2P tag 0x3102, 32 bytes,
    /// secret); the receiver checks each against the verifying share, interpolates and checks the
    /// result against the public key.
    public enum Export {
        /// The P2P payload: s_i (32 bytes).
        public static func shareMessage(_ keyshare: Keyshare) -> [UInt8] { keyshare.secretShare.bytes }

        /// The group secret x from the receiver's keyshare and the messages of ≥ t − 1 other parties.
        /// A share that does not match its verifying share is `abort(sender, .invalidShare)`.
        public static func reconstruct(_ keyshare: Keyshare, messages: [PartyIndex: [UInt8]]) throws(ProtocolError) -> Scalar {
            var shares: [PartyIndex: Scalar] = [keyshare.party: keyshare.secretShare]
            for (sender, bytes) in messages.sorted(by: { $0.key < $1.key }) {
                guard sender < keyshare.parties, sender != keyshare.party else { throw .abort(party: sender, reason: .unexpectedSender) }
                guard bytes.count == 32 else { throw .abort(party: sender, reason: .malformedMessage) }
                var r = ByteReader(bytes, from: sender)
                let s = try r.readEd25519Scalar()
                try r.finish()
                guard Point(base: s) == keyshare.verifyingShares[Int(sender)] else {
                    throw .abort(party: sender, reason: .invalidShare)
                }
                shares[sender] = s
            }
            guard shares.count >= Int(keyshare.threshold) else { throw .abort(party: nil, reason: .missingMessages) }
            let set = shares.keys.sorted().map { Identifier(party: $0) }
            var x = Scalar.zero
            for id in set {
                guard let party = id.party, let s = shares[party] else { continue }
                x += try FROST.lagrange(id, over: set) * s
            }
            guard Point(base: x) == keyshare.publicKey else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            return x
        }
    }
}
