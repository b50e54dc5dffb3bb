import Foundation
import SessionEngine

/// What the store knows of one presignature of a key (session.md §8.6).
package enum PresignatureHolding: Sendable, Equatable {
    /// No row and no finish record for this key.
    case unknown
    /// A row: unused, until `expiresAt` (seconds), made by `deviceKey`.
    case held(expiresAt: Int64, expired: Bool, deviceKey: [UInt8])
    /// A finish record (consumed).
    case consumed
}

extension NodeShareStore {
    /// The holding of each of `ids` for key `keyId`, in order, read in one snapshot. Rows and finish
    /// records of other keys count as `unknown` (nothing about another key is revealed).
    package func presignatureHoldings(keyId: String, ids: [[UInt8]]) throws(NodeStoreError) -> [PresignatureHolding] {
        let id = try Self.canonicalKeyId(keyId)
        for presignatureId in ids { try Self.require32(presignatureId, "presignature id") }
        return try reading { db throws(NodeStoreError) -> [PresignatureHolding] in
            let timestamp = now
            var holdings: [PresignatureHolding] = []
            for presignatureId in ids {
                if let row = try db.first("SELECT expires_at, device_key FROM presignatures WHERE presig_id = ? AND key_id = ?",
                                          [.blob(presignatureId), .text(id)]) {
                    let expiresAt = try row.integer(0)
                    holdings.append(.held(expiresAt: expiresAt, expired: timestamp >= expiresAt, deviceKey: try row.blob(1)))
                } else if try db.first("SELECT 1 FROM finish_records WHERE presig_id = ? AND key_id = ?",
                                       [.blob(presignatureId), .text(id)]) != nil {
                    holdings.append(.consumed)
                } else {
                    holdings.append(.unknown)
                }
            }
            return holdings
        }
    }
}
