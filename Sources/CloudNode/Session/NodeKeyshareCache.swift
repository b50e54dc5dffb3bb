import MPCCrypto
import SilentShardCore

/// Decoded, validated keyshares a node has loaded recently, by the SHA-256 of what was decoded.
///
/// Decoding a keyshare validates it (every point on its curve, the share consistent with the public
/// key), which costs more than a whole EdDSA signing round: a node that signs with the same key again
/// finds it here. The key of an entry is a digest of the exact bytes read from the sealed store (and
/// algorithm, mode, group), so a refreshed or replaced share is a different entry and can never be
/// served for another; old entries are evicted (at most `capacity`).
///
/// Entries hold secret shares in memory, as the node does anyway while it serves a session; the
/// master key that opens every stored share lives in the same process.
final class NodeKeyshareCache: Sendable {
    private let entries: BoundedCache<[UInt8], Keyshare>

    init(capacity: Int = 256) {
        entries = BoundedCache(capacity: capacity)
    }

    /// `Keyshare(algorithm:mode:protocolBytes:groupId:)`, decoded once per distinct input.
    func keyshare(algorithm: Keyshare.Algorithm, mode: Keyshare.Mode, protocolBytes: [UInt8],
                  groupId: [UInt8]? = nil) throws(SilentShardError) -> Keyshare {
        var input: [UInt8] = [algorithm.rawValue, mode.rawValue]
        if let groupId { input += [UInt8(truncatingIfNeeded: groupId.count)] + groupId } else { input.append(0xff) }
        input += protocolBytes
        let digest = SHA256.hash(input)
        return try entries.value(for: digest) { () throws(SilentShardError) -> Keyshare in
            try Keyshare(algorithm: algorithm, mode: mode, protocolBytes: protocolBytes, groupId: groupId)
        }
    }

    /// The number of cached keyshares (for tests).
    var count: Int { entries.count }
}
