import Foundation
import SessionEngine

/// Per-key leases (session.md §7.2): at most one share-changing session (refresh, import, reconcile)
/// runs on a key at a time. The lease is a database row carrying its expiry and the process that
/// took it, so every process that opens the same database agrees; a lease left by a crashed process
/// ends at its expiry, or at once when that process is known dead (`LeaseProcess`: same boot, pid
/// gone or reused): a node restarted after a crash can reconcile the key the crash interrupted
/// without waiting out the lease. A holder on another machine is never judged dead. On PostgreSQL the read-check-write runs under the key's advisory lock, so two processes cannot
/// both see the lease free.
extension NodeShareStore {
    /// Takes the lease on `keyId` for `holder` (an opaque session id, e.g. the instance id) until
    /// `seconds` from now. Taking a lease one already holds extends it. An unexpired lease held by
    /// another session of a live process is `keyBusy`.
    package func acquireLease(keyId: String, holder: [UInt8], seconds: Int64) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        guard !holder.isEmpty, seconds > 0 else { throw .invalidArgument("lease holder and duration") }
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            let now = self.now
            if let row = try db.first("SELECT holder, expires_at, process FROM leases WHERE key_id = ?", [.text(id)]) {
                let holderNow = try row.blob(0)
                let process = row.isNull(2) ? nil : try row.text(2)
                if holderNow != holder, try row.integer(1) > now, !(process.map(LeaseProcess.isDead) ?? false) {
                    throw .keyBusy(keyId: id)
                }
            }
            try db.run("""
                INSERT INTO leases (key_id, holder, expires_at, process) VALUES (?, ?, ?, ?)
                ON CONFLICT (key_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at,
                    process = excluded.process
                """, [.text(id), .blob(holder), .integer(now + seconds), .text(LeaseProcess.current)])
        }
    }

    /// Releases `holder`'s lease on `keyId`; a lease held by someone else (or none) is left alone.
    package func releaseLease(keyId: String, holder: [UInt8]) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            try db.run("DELETE FROM leases WHERE key_id = ? AND holder = ?", [.text(id), .blob(holder)])
        }
    }
}

/// Names the process holding a lease: `boot id:pid namespace:pid:start time` (Linux `/proc`). A lease
/// whose process is gone (no such pid, or a pid reused by a later process) is void — but only when
/// this process can see it: same boot and same pid namespace. A holder in another pid namespace (a
/// container sharing the database file) or on another boot of another host is never judged dead (its
/// lease ends at its expiry, as before); after a reboot of this host (another boot id, same namespace
/// inode cannot be compared) the lease also just expires. Without `/proc` nothing is judged dead.
enum LeaseProcess {
    static let current: String = {
        guard let boot = bootID, let namespace = pidNamespace, let start = startTime(pid: getpid()) else { return "" }
        return "\(boot):\(namespace):\(getpid()):\(start)"
    }()

    private static let bootID: String? = {
        guard let data = FileManager.default.contents(atPath: "/proc/sys/kernel/random/boot_id") else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty || text.contains(":") ? nil : text
    }()

    /// The pid namespace's inode, e.g. "4026531836" from `pid:[4026531836]`.
    private static let pidNamespace: String? = {
        guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid") else { return nil }
        let digits = link.filter(\.isNumber)
        return digits.isEmpty ? nil : digits
    }()

    /// Field 22 of `/proc/<pid>/stat` (start time in clock ticks after boot).
    static func startTime(pid: Int32) -> String? {
        guard pid > 0, let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After ')': field 3 is fields[0], so field 22 is fields[19].
        return fields.count > 19 ? String(fields[19]) : nil
    }

    /// True only when `tag` names a process of this boot and pid namespace that has ended.
    static func isDead(_ tag: String) -> Bool {
        let parts = tag.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 4, !current.isEmpty, let boot = bootID, let namespace = pidNamespace,
              parts[0] == boot, parts[1] == namespace, let pid = Int32(parts[2])
        else { return false }
        guard let start = startTime(pid: pid) else { return true }
        return start != parts[3]
    }
}
