import Foundation
import SilentShardCore

/// How a trio app share is kept in the `StorageClient` record (`StoredShare.bytes`, kind `.ecdsa` /
/// `.eddsa`): `"SST1" ‖ D (32: the commit digest it was staged and committed under) ‖ Keyshare.serialized()` (which carries the
/// cluster's `group_id`). A staged share keeps the commit digest D it was staged under, so reconcile
/// can report it in `app_state` and send COMMIT(g, D) (`specs/session.md` §7.3).
struct TrioStoredShare: Sendable {
    private static let magic = Array("SST1".utf8)
    let keyshare: Keyshare
    let digest: [UInt8]

    init(keyshare: Keyshare, digest: [UInt8]?) {
        self.keyshare = keyshare
        self.digest = digest ?? [UInt8](repeating: 0, count: 32)
    }

    /// The record's share; anything malformed is `invalidKeyshare` (never a trap).
    init(_ stored: StoredShare) throws(SilentShardError) {
        let bytes = [UInt8](stored.bytes)
        guard bytes.count > 36, Array(bytes[0..<4]) == Self.magic else { throw .invalidKeyshare(reason: "not a trio share record") }
        digest = Array(bytes[4..<36])
        keyshare = try Keyshare(serialized: Data(bytes[36...]))
        let expected = StoredShareKind(keyshare.algorithm)
        guard stored.kind == expected else { throw .invalidKeyshare(reason: "record kind mismatch") }
    }

    var stored: StoredShare {
        StoredShare(kind: StoredShareKind(keyshare.algorithm),
                    bytes: Self.magic + digest + [UInt8](keyshare.serialized()))
    }
}
