internal import CSodium

extension Ed25519 {
    /// Encodings already found valid by `crypto_core_ed25519_is_valid_point`. The check costs about
    /// one scalar multiplication and the same keys come back in every session (the cloud node's key,
    /// a device key, a keyshare's group key and verifying shares), so a valid answer is remembered.
    /// Only public encodings pass through here; only `true` answers are cached.
    private static let validEncodings = BoundedCache<[UInt8], Bool>(capacity: 4096)

    /// Whether `encoding` (32 bytes) is a canonical point on the curve, in the prime-order subgroup
    /// and not of small order.
    static func isValidPoint(_ encoding: [UInt8]) -> Bool {
        guard encoding.count == 32 else { return false }
        if validEncodings.value(for: encoding) != nil { return true }
        guard crypto_core_ed25519_is_valid_point(encoding) == 1 else { return false }
        validEncodings.insert(true, for: encoding)
        return true
    }
}
