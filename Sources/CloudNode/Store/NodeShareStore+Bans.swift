import Foundation
import MPCCrypto
import SilentShardCore

/// Device bans after AbortAndBan (session.md §9.4). Only an operator lifts a ban; both are audited.
extension NodeShareStore {
    /// Bans `deviceKey` and deletes the presignatures shared with it, in one transaction (the caller
    /// aborts the device's running sessions). `reason` names the failed check; `instanceId` is the
    /// session's id (evidence). Banning again updates the evidence. Returns the presignatures deleted.
    @discardableResult
    public func ban(deviceKey: [UInt8], reason: String, instanceId: [UInt8], party: String) throws(NodeStoreError) -> Int {
        guard !deviceKey.isEmpty, deviceKey.count <= 128 else { throw .invalidArgument("device key length") }
        return try transaction { db throws(NodeStoreError) -> Int in
            let deleted = try sql { () throws(SQLiteError) -> Int in
                try db.run("INSERT OR REPLACE INTO bans (device_key, reason, instance_id, banned_at) VALUES (?, ?, ?, ?)",
                           [.blob(deviceKey), .text(reason), .blob(instanceId), .integer(now)])
                return try db.run("DELETE FROM presignatures WHERE device_key = ?", [.blob(deviceKey)])
            }
            try audit(db, "ban", keyId: nil, party: party, outcome: "banned device \(hex(deviceKey)): \(reason)")
            return deleted
        }
    }

    /// True when `deviceKey` is banned.
    public func isBanned(deviceKey: [UInt8]) throws(NodeStoreError) -> Bool {
        try connection.withConnection { db throws(NodeStoreError) in try isBanned(db, deviceKey) }
    }

    /// The ban on `deviceKey`, if any.
    public func ban(deviceKey: [UInt8]) throws(NodeStoreError) -> DeviceBan? {
        try reading { db throws(SQLiteError) -> DeviceBan? in
            let statement = try db.prepare("SELECT reason, instance_id, banned_at FROM bans WHERE device_key = ?")
            try statement.bind([.blob(deviceKey)])
            guard try statement.step() else { return nil }
            return DeviceBan(deviceKey: deviceKey, reason: try statement.text(0), instanceId: try statement.blob(1),
                             bannedAt: Date(timeIntervalSince1970: TimeInterval(try statement.integer(2))))
        }
    }

    /// Lifts the ban on `deviceKey` (operator action, audited with the operator's name). Returns
    /// whether a ban existed.
    @discardableResult
    public func liftBan(deviceKey: [UInt8], operator operatorName: String) throws(NodeStoreError) -> Bool {
        try transaction { db throws(NodeStoreError) -> Bool in
            let removed = try sql { () throws(SQLiteError) -> Int in
                try db.run("DELETE FROM bans WHERE device_key = ?", [.blob(deviceKey)])
            }
            try audit(db, "lift ban", keyId: nil, party: "operator \(operatorName)",
                      outcome: removed > 0 ? "lifted for device \(hex(deviceKey))" : "no ban for device \(hex(deviceKey))")
            return removed > 0
        }
    }

    func isBanned(_ db: SQLiteConnection, _ deviceKey: [UInt8]) throws(NodeStoreError) -> Bool {
        try sql { () throws(SQLiteError) -> Bool in
            let statement = try db.prepare("SELECT 1 FROM bans WHERE device_key = ?")
            try statement.bind([.blob(deviceKey)])
            return try statement.step()
        }
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
