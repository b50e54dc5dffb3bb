internal import CSecp256k1

// BIP340 helpers: tagged hashes, x-only keys, even-Y tests and libsecp256k1's Schnorr verification.
// Everything here works on public values (keys, nonces' commitments, signatures).

extension Secp256k1 {
    /// BIP340 `hash_tag(x) = SHA256(SHA256(tag) ‖ SHA256(tag) ‖ x)`.
    public static func taggedHash(_ tag: String, _ data: [UInt8]) -> [UInt8] {
        let tagHash = SHA256.hash(Array(tag.utf8))
        return SHA256.hash(tagHash + tagHash + data)
    }

    /// BIP340 signature verification by libsecp256k1 (`secp256k1_schnorrsig_verify`): `signature` is
    /// 64 bytes (r ‖ s), `xOnlyKey` 32 bytes, `message` of any length. False for anything malformed
    /// (a key not on the curve, r ≥ p, s ≥ n, wrong lengths).
    public static func verifySchnorr(signature: [UInt8], message: [UInt8], xOnlyKey: [UInt8]) -> Bool {
        guard signature.count == 64, xOnlyKey.count == 32 else { return false }
        let context = Secp256k1Context.shared.pointer
        var key = secp256k1_xonly_pubkey()
        guard secp256k1_xonly_pubkey_parse(context, &key, xOnlyKey) == 1 else { return false }
        return message.withUnsafeBufferPointer { msg in
            secp256k1_schnorrsig_verify(context, signature, msg.baseAddress, msg.count, &key) == 1
        }
    }
}

extension Secp256k1.Point {
    /// Whether the point's y coordinate is even (BIP340 `has_even_y`). The identity has none: false.
    public var hasEvenY: Bool {
        guard let encoding = try? compressed() else { return false }
        return encoding[0] == 0x02
    }

    /// The 32-byte x coordinate (BIP340 `bytes(P)`). The identity has none.
    public func xOnly() throws(CryptoError) -> [UInt8] {
        Array(try compressed().dropFirst())
    }

    /// BIP340 `lift_x`: the point with x coordinate `x` and even y. Rejects x ≥ p and x with no point.
    public init<Bytes: Collection<UInt8>>(xOnly x: Bytes) throws(CryptoError) {
        guard x.count == 32 else { throw .invalidLength(expected: 32, actual: x.count) }
        try self.init(compressed: [0x02] + Array(x))
    }
}
