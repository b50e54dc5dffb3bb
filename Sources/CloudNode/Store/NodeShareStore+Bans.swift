import Foundation
import MPCCrypto
import SessionEngine

/// Device bans after AbortAndBan (session.md §9.4). Only an operator lifts a ban; both are audited.
extension NodeShareStore {
    /// Bans `deviceKey` and deletes the presignatures shared with it, in one transaction (the caller
    /// aborts the device's running sessions). `reason` names the failed check; `instanceId` is the
    /// session's id (evidence). Banning again updates the evidence. Returns the presignatures deleted.
    @discardableResult
    package func ban(deviceKey: [UInt8], reason: String, instanceId: [UInt8], party: String) throws(NodeStoreError) -> Int {
        guard !deviceKey.isEmpty, deviceKey.count <= 128 else { throw .invalidArgument("device key length") }
        return try transaction { db throws(NodeStoreError) -> Int in
            try db.lock(.device(deviceKey))
            try db.run("""
                INSERT INTO bans (device_key, reason, instance_id, banned_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (device_key) DO UPDATE SET reason = excluded.reason, instance_id = excluded.instance_id,
                    banned_at = excluded.banned_at
                """, [.blob(deviceKey), .text(reason), .blob(instanceId), .integer(now)])
            let deleted = try db.run("DELETE FROM presignatures WHERE device_key = ?", [.blob(deviceKey)])
            try audit(db, "ban", keyId: nil, party: party, outcome: "banned device \(hex(deviceKey)): \(reason)")
            return deleted
        }
    }

    /// True when `deviceKey` is banned.
    package func isBanned(deviceKey: [UInt8]) throws(NodeStoreError) -> Bool {
        try reading { db throws(NodeStoreError) in try isBanned(db, deviceKey) }
    }

    /// The ban on `deviceKey`, if any.
    package func ban(deviceKey: [UInt8]) throws(NodeStoreError) -> DeviceBan? {
        try reading { db throws(NodeStoreError) -> DeviceBan? in
            guard let row = try db.first("SELECT reason, instance_id, banned_at FROM bans WHERE device_key = ?",
                                         [.blob(deviceKey)]) else { return nil }
            return DeviceBan(deviceKey: deviceKey, reason: try row.text(0), instanceId: try row.blob(1),
                             bannedAt: Date(timeIntervalSince1970: TimeInterval(try row.integer(2))))
        }
    }

    /// Lifts the ban on `deviceKey` (operator action, audited with the operator's name). Returns
    /// whether a ban existed.
    @discardableResult
    package func liftBan(deviceKey: [UInt8], operator operatorName: String) throws(NodeStoreError) -> Bool {
        try transaction { db throws(NodeStoreError) -> Bool in
            try db.lock(.device(deviceKey))
            let removed = try db.run("DELETE FROM bans WHERE device_key = ?", [.blob(deviceKey)])
            try audit(db, "lift ban", keyId: nil, party: "operator \(operatorName)",
                      outcome: removed > 0 ? "lifted for device \(hex(deviceKey))" : "no ban for device \(hex(deviceKey))")
            return removed > 0
        }
    }

    func isBanned(_ db: any StoreSQL, _ deviceKey: [UInt8]) throws(NodeStoreError) -> Bool {
        try db.first("SELECT 1 FROM bans WHERE device_key = ?", [.blob(deviceKey)]) != nil
    }
}

/// Lowercase hex of public bytes (device keys) for audit lines.
func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
    return String(decoding: out, as: UTF8.self)
}
