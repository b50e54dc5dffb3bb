import MPCCrypto

/// ECDSA over P-256 with SHA-256, and X25519 key agreement.
enum P256Operations {
    /// `{privateKey, message}` → `{publicKey (65-byte SEC1), compressedPublicKey, raw (r‖s), der}`.
    static func sign(_ input: CaseInput) throws -> JSONValue {
        let key = try P256.SigningKey(rawRepresentation: input.bytes("privateKey"))
        let signature = try key.signature(for: input.bytes("message"))
        return .object([
            "publicKey": .hex(key.verifyingKey.x963Representation),
            "compressedPublicKey": .hex(key.verifyingKey.compressedRepresentation),
            "raw": .hex(signature.rawRepresentation),
            "der": .hex(signature.derRepresentation),
        ])
    }

    /// `{publicKey, message, signature, encoding: "raw" | "der"}` → `{valid, publicKey}` (the key
    /// re-encoded uncompressed). A malformed key or signature encoding is the case's error.
    static func verify(_ input: CaseInput) throws -> JSONValue {
        let key = try P256.VerifyingKey(x963Representation: input.bytes("publicKey"))
        let encoded = try input.bytes("signature")
        let signature: P256.Signature
        switch try input.string("encoding") {
        case "raw": signature = try P256.Signature(rawRepresentation: encoded)
        case "der": signature = try P256.Signature(derRepresentation: encoded)
        default: throw InteropError.outOfRange(field: "encoding")
        }
        return .object([
            "valid": .bool(key.isValidSignature(signature, for: try input.bytes("message"))),
            "publicKey": .hex(key.x963Representation),
        ])
    }
}

/// X25519 (RFC 7748).
enum KeyAgreementOperations {
    /// `{privateKey, peerPublicKey}` → `{publicKey, shared}`; `shared` is the secret or its error
    /// (`weakSharedSecret` for a small-order peer key).
    static func x25519(_ input: CaseInput) throws -> JSONValue {
        let key = try X25519.PrivateKey(rawRepresentation: input.bytes("privateKey"))
        let peer = try X25519.PublicKey(bytes: input.bytes("peerPublicKey"))
        return .object([
            "publicKey": .hex(key.publicKey.bytes),
            "shared": ErrorReport.outcome { try key.sharedSecret(with: peer) },
        ])
    }
}
