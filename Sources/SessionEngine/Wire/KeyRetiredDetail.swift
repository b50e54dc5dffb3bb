/// The detail of a KEY_RETIRED REJECT (spec proposal P7, security review finding 1): the key named was a
/// hard-derived child, retired when its parent moved to a new generation (refresh or recover). The
/// owner derives it again from the parent's current generation along the same path — same public key.
///
/// Encoding: `parent_key_id[32] ‖ path` (the SETUP path encoding, `DerivationPathBytes`).
package struct KeyRetiredDetail: Sendable, Equatable {
    package var parentKeyID: KeyID
    /// The derivation path in SETUP's encoding.
    package var path: [UInt8]

    package init(parentKeyID: KeyID, path: [UInt8]) {
        self.parentKeyID = parentKeyID
        self.path = path
    }

    /// Strict decoding: 32 bytes of parent key id, then a well-formed path.
    package init(bytes: [UInt8]) throws(SessionError) {
        guard bytes.count > 32 else { throw .malformed }
        parentKeyID = KeyID(checked: Array(bytes.prefix(KeyID.byteCount)))
        path = Array(bytes.dropFirst(32))
        do { _ = try DerivationPathBytes(bytes: path) } catch { throw .malformed }
    }

    /// The path as text, e.g. `m/44'/60'/0'`.
    package var pathText: String {
        guard let decoded = try? DerivationPathBytes(bytes: path) else { return "m" }
        return decoded.text
    }

    package var encoded: [UInt8] { parentKeyID.bytes + path }
}

extension DerivationPathBytes {
    /// `m`, then each index (`'` for hardened ones), e.g. `m/44'/60'/0'/0/1`.
    package var text: String {
        (["m"] + indices.map { index in
            index & Self.hardenedBit != 0 ? "\(index & ~Self.hardenedBit)'" : "\(index)"
        }).joined(separator: "/")
    }
}
