import Foundation

/// How the app stores a keyshare in its `StorageClient` record, by mode. The formats are fixed: records
/// already on users' devices must stay readable.
///
/// * duo: the keyshare's protocol bytes alone (a duo node never holds PREPARED, so no digest is kept;
///   reconcile uses zeros);
/// * trio: `"SST1" ‖ D (32) ‖ Keyshare.serialized()`, the commit digest D the share was staged under.
package enum AppStoredShare {
    private static let trioMagic = Array("SST1".utf8)
    private static let noDigest = [UInt8](repeating: 0, count: 32)

    /// The record share of `keyshare`, staged under `digest` (trio keeps it).
    package static func encode(_ keyshare: Keyshare, digest: [UInt8]?, mode: SessionMode) -> StoredShare {
        switch mode {
        case .duo:
            return StoredShare(kind: StoredShareKind(keyshare.algorithm), bytes: keyshare.protocolKeyshareBytes)
        case .trio:
            return StoredShare(kind: StoredShareKind(keyshare.algorithm),
                               bytes: trioMagic + (digest ?? noDigest) + [UInt8](keyshare.serialized()))
        }
    }

    /// The keyshare of a record share and the digest it was staged under (duo: zeros). Anything
    /// malformed is `invalidKeyshare` (never a trap).
    package static func decode(_ stored: StoredShare, mode: SessionMode) throws(SilentShardError) -> (keyshare: Keyshare, digest: [UInt8]) {
        switch mode {
        case .duo:
            guard let algorithm = stored.kind.algorithm else { throw .invalidKeyshare(reason: "not a keyshare record") }
            return (try Keyshare(algorithm: algorithm, mode: .duo, protocolBytes: [UInt8](stored.bytes)), noDigest)
        case .trio:
            let bytes = [UInt8](stored.bytes)
            guard bytes.count > 36, Array(bytes[0..<4]) == trioMagic else {
                throw .invalidKeyshare(reason: "not a trio share record")
            }
            let keyshare = try Keyshare(serialized: Data(bytes[36...]))
            guard stored.kind == StoredShareKind(keyshare.algorithm) else { throw .invalidKeyshare(reason: "record kind mismatch") }
            return (keyshare, Array(bytes[4..<36]))
        }
    }
}
