import SilentShardCore

/// The secret half of a presignature as the node stores it, sealed, in its `presignatures` row
/// (`docs/protocol/session.md` §8.2): the preSignFinal key pair `kf_{0→X} ‖ kf_{X→0}` and the node's half.
///
/// Stored bytes: `u8 version ‖ kf_{0→X} (32) ‖ kf_{X→0} (32) ‖ body`, where
/// * version 1 (ECDSA, DKLs23): body = `DKLsPresignature.serialized()`;
/// * version 2 (EdDSA, FROST): body = `u16 n ‖ path bytes (n) ‖ the app's round-1 commitments (64) ‖
///   FROST.Presignature.serialized()`.
///
/// Decoding checks the version, the lengths and that no half is empty; a row that does not decode is a
/// ``DecodingError`` (never a trap), which the finish answers as INTERNAL. The protocol halves stay opaque
/// here: their own deserializers validate them. Secrets never appear in `description`, and the type has no `==`
/// (no comparison of secrets that is not constant-time).
package struct StoredPresignatureSecret: Sendable, SecretRedacting {
    /// The node's half, by algorithm.
    package enum Half: Sendable, SecretRedacting {
        /// Version 1: `DKLsPresignature.serialized()`.
        case dkls(presignature: [UInt8])
        /// Version 2: the signing path, the app's round-1 commitments and `FROST.Presignature.serialized()`.
        case frost(path: [UInt8], appRound1: [UInt8], nonces: [UInt8])

        /// Redacted: the halves are secrets.
        package var description: String {
            switch self {
            case .dkls: "StoredPresignatureSecret.Half.dkls(<redacted>)"
            case .frost: "StoredPresignatureSecret.Half.frost(<redacted>)"
            }
        }
    }

    /// Why stored bytes are not a presignature secret.
    package enum DecodingError: Error, Sendable, Equatable {
        /// Fewer bytes than the layout needs.
        case truncated
        /// A field of the wrong length (a key pair half, an empty body).
        case wrongLength
        /// A version this node does not write.
        case unknownVersion(UInt8)
    }

    static let dklsVersion: UInt8 = 1
    static let frostVersion: UInt8 = 2
    static let keyByteCount = 32
    static let appRound1ByteCount = 64

    /// `kf_{0→X}`: opens the app's FINAL_REQUEST.
    package let requestKey: [UInt8]
    /// `kf_{X→0}`: seals the node's FINAL_RESPONSE.
    package let responseKey: [UInt8]
    package let half: Half

    /// A secret with 32-byte keys and a non-empty half (`wrongLength` otherwise).
    package init(requestKey: [UInt8], responseKey: [UInt8], half: Half) throws(DecodingError) {
        guard requestKey.count == Self.keyByteCount, responseKey.count == Self.keyByteCount else { throw .wrongLength }
        switch half {
        case .dkls(let presignature):
            guard !presignature.isEmpty else { throw .wrongLength }
        case .frost(let path, let appRound1, let nonces):
            guard path.count <= Int(UInt16.max), appRound1.count == Self.appRound1ByteCount, !nonces.isEmpty else {
                throw .wrongLength
            }
        }
        self.requestKey = requestKey
        self.responseKey = responseKey
        self.half = half
    }

    /// Decodes stored bytes (see the type's layout).
    package init(bytes: [UInt8]) throws(DecodingError) {
        let keys = 1 + 2 * Self.keyByteCount
        guard let version = bytes.first else { throw .truncated }
        guard version == Self.dklsVersion || version == Self.frostVersion else { throw .unknownVersion(version) }
        guard bytes.count > keys else { throw .truncated }
        let requestKey = Array(bytes[1..<(1 + Self.keyByteCount)])
        let responseKey = Array(bytes[(1 + Self.keyByteCount)..<keys])
        let body = Array(bytes[keys...])
        if version == Self.dklsVersion {
            try self.init(requestKey: requestKey, responseKey: responseKey, half: .dkls(presignature: body))
            return
        }
        guard body.count >= 2 else { throw .truncated }
        let pathLength = Int(body[0]) << 8 | Int(body[1])
        let noncesStart = 2 + pathLength + Self.appRound1ByteCount
        guard body.count > noncesStart else { throw .truncated }
        try self.init(requestKey: requestKey, responseKey: responseKey,
                      half: .frost(path: Array(body[2..<(2 + pathLength)]),
                                   appRound1: Array(body[(2 + pathLength)..<noncesStart]),
                                   nonces: Array(body[noncesStart...])))
    }

    /// The stored bytes.
    package var encoded: [UInt8] {
        switch half {
        case .dkls(let presignature):
            return [Self.dklsVersion] + requestKey + responseKey + presignature
        case .frost(let path, let appRound1, let nonces):
            return [Self.frostVersion] + requestKey + responseKey + [UInt8(path.count >> 8), UInt8(path.count & 0xFF)]
                + path + appRound1 + nonces
        }
    }

    package var description: String {
        switch half {
        case .dkls: "StoredPresignatureSecret(ECDSA, redacted)"
        case .frost: "StoredPresignatureSecret(EdDSA, redacted)"
        }
    }
}
