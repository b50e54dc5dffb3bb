import CloudNode
import Foundation
import SilentShardCore

/// The checks after a load run: every key made can sign through each given URL, and the node
/// database holds exactly those keys at the generations the apps hold.
enum LoadChecks {
    /// Signs through one URL.
    struct NodeCheck: Sendable {
        var url: String
        var keys: Int
        var signed: Int
        /// Up to 5 failures, "key id prefix: error".
        var failures: [String]
        var passed: Bool { signed == keys }
    }

    /// The database's view of the run.
    struct StoreCheck: Sendable {
        var keysMade: Int
        var keysStored: Int
        /// Keys whose CURRENT generation at the node differs from the app's (or is missing).
        var generationMismatches: Int
        /// Presignatures the node holds for the keys (the duo path makes none).
        var presignatures: Int
        var error: String?
        var passed: Bool { error == nil && keysStored == keysMade && generationMismatches == 0 && presignatures == 0 }
    }

    /// One sign per completed keygen through each URL (no retry), `clients` at a time, every signature verified.
    static func signThrough(_ urls: [String], run: LoadRun.Result, clients: Int) async -> [NodeCheck] {
        let keyed = zip(run.sessions, run.outcomes).compactMap { session, outcome in outcome.keyshare.map { (session, $0) } }
        var checks: [NodeCheck] = []
        for url in urls {
            let next = LoadCounter()
            let failures = await withTaskGroup(of: [String].self) { group in
                for _ in 0..<max(1, min(clients, keyed.count)) {
                    group.addTask {
                        var failed: [String] = []
                        while true {
                            let index = next.take()
                            guard index < keyed.count else { return failed }
                            let (session, keyshare) = keyed[index]
                            if let error = await session.checkSign(keyshare: keyshare, url: url) {
                                failed.append("\(keyshare.keyId.prefix(12))…: \(error)")
                            }
                        }
                    }
                }
                var all: [String] = []
                for await part in group { all += part }
                return all
            }
            checks.append(NodeCheck(url: url, keys: keyed.count, signed: keyed.count - failures.count,
                                    failures: Array(failures.prefix(5))))
        }
        return checks
    }

    /// Opens the node database (read only in effect) and compares it with the keys the apps hold.
    static func store(database: String, masterKeyPath: String, run: LoadRun.Result) -> StoreCheck {
        let keyshares = run.outcomes.compactMap(\.keyshare)
        var check = StoreCheck(keysMade: keyshares.count, keysStored: 0, generationMismatches: 0, presignatures: 0)
        do {
            let masterKey = try NodeCommand.loadOrGenerateMasterKey(path: masterKeyPath, generate: false)
            let store = try NodeCommand.openStore(database: database, masterKey: masterKey)
            check.keysStored = try store.keyCount()
            for keyshare in keyshares {
                if try store.status(keyId: keyshare.keyId).currentGen != [UInt8](keyshare.generation) {
                    check.generationMismatches += 1
                }
                check.presignatures += try store.presignatureCount(keyId: keyshare.keyId)
            }
        } catch {
            check.error = "\(error)"
        }
        return check
    }
}
