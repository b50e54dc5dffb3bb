import Foundation
import SessionEngine

/// What the store holds under one presignature id, read without a write transaction (session.md §8.3).
package enum PresignatureLookup: Sendable, Equatable {
    /// No row and no finish record.
    case none
    /// An unused row of key `keyId`, made by `deviceKey`, expired at the store's clock or not.
    case held(keyId: String, deviceKey: [UInt8], expired: Bool)
    /// A finish record of key `keyId`: the hash of the request that consumed it and its response.
    case finished(keyId: String, requestHash: [UInt8], response: [UInt8])
}

extension NodeShareStore {
    /// The presignature `presignatureId` as the store has it, read only (security review 2, finding 4: a
    /// preSignFinal for an unknown, consumed or expired id, or one the caller may not finish, is answered from
    /// this read without opening a write transaction; `consumePresignature` checks everything again).
    package func presignatureLookup(id presignatureId: [UInt8]) throws(NodeStoreError) -> PresignatureLookup {
        try Self.require32(presignatureId, "presignature id")
        return try reading { db throws(NodeStoreError) -> PresignatureLookup in
            // Rows of an older epoch (a restored database's, second security review finding 1) are no longer held.
            if let row = try db.first("""
                SELECT key_id, device_key, expires_at FROM presignatures
                WHERE presig_id = ? AND epoch = (SELECT value FROM meta WHERE name = 'presign_epoch')
                """, [.blob(presignatureId)]) {
                return .held(keyId: try row.text(0), deviceKey: try row.blob(1), expired: now >= (try row.integer(2)))
            }
            if let record = try db.first("SELECT key_id, request_hash, response FROM finish_records WHERE presig_id = ?",
                                         [.blob(presignatureId)]) {
                return .finished(keyId: try record.text(0), requestHash: try record.blob(1), response: try record.blob(2))
            }
            return .none
        }
    }
}
