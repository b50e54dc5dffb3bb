import MPCCrypto

/// AEAD sealing of rows under the master key, with associated data that names exactly where a sealed
/// value belongs, so a row copied to another key id, slot, generation or presignature id fails to open.
enum Sealing {
    /// Seals `plaintext`; returns (nonce, ciphertext ‖ tag). The 24-byte nonce is random.
    static func seal(_ plaintext: [UInt8], key: NodeMasterKey, associatedData: [UInt8]) -> (nonce: [UInt8], sealed: [UInt8]) {
        let nonce = SecureRandom.bytes(count: XChaCha20Poly1305.nonceByteCount)
        // Lengths are fixed and correct here, so sealing cannot fail.
        let sealed = (try? XChaCha20Poly1305.seal(plaintext, key: key.bytes, nonce: nonce, associatedData: associatedData)) ?? []
        return (nonce, sealed)
    }

    /// Opens a sealed value, or nil when it does not authenticate (or the nonce is malformed).
    static func open(_ sealed: [UInt8], nonce: [UInt8], key: NodeMasterKey, associatedData: [UInt8]) -> [UInt8]? {
        guard nonce.count == XChaCha20Poly1305.nonceByteCount else { return nil }
        return try? XChaCha20Poly1305.open(sealed, key: key.bytes, nonce: nonce, associatedData: associatedData)
    }

    /// AD of a keyshare row: domain ‖ key id ‖ slot ‖ gen ‖ kind ‖ digest.
    static func shareAssociatedData(keyId: String, slot: NodeShareSlot, gen: [UInt8], kind: UInt8, digest: [UInt8]) -> [UInt8] {
        var out = Array("SilentShard/v3/node/keyshare".utf8) + [0]
        out += lengthPrefixed(Array(keyId.utf8))
        out.append(slot.rawValue)
        out += lengthPrefixed(gen)
        out.append(kind)
        out += lengthPrefixed(digest)
        return out
    }

    /// AD of a presignature row (session.md §8.2: presig_id ‖ key_id ‖ gen, plus the row's other
    /// fields so none can be altered): domain ‖ id ‖ key id ‖ gen ‖ party ‖ device key ‖ expires_at.
    static func presignatureAssociatedData(id: [UInt8], keyId: String, gen: [UInt8], party: UInt8,
                                           deviceKey: [UInt8], expiresAt: Int64) -> [UInt8] {
        var out = Array("SilentShard/v3/node/presignature".utf8) + [0]
        out += lengthPrefixed(id) + lengthPrefixed(Array(keyId.utf8)) + lengthPrefixed(gen)
        out.append(party)
        out += lengthPrefixed(deviceKey)
        out += (0..<8).map { UInt8(truncatingIfNeeded: UInt64(bitPattern: expiresAt) >> (56 - 8 * UInt64($0))) }
        return out
    }

    /// Fixed value sealed in the meta table to recognize the right master key at open.
    static let keyCheckAssociatedData = Array("SilentShard/v3/node/key-check".utf8)

    private static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: bytes.count >> 8), UInt8(truncatingIfNeeded: bytes.count)] + bytes
    }
}
