import CloudNode
import Foundation
import MPCCrypto

/// `silentshard node restore-fence`: after restoring the node's database from a backup, invalidates every
/// presignature stored before (second security review finding 1; `docs/node-server.md` "Backup and
/// restore"), records the fence in the store and prints what it invalidated. Run it with every node process
/// of the role stopped, before starting them again.
enum RestoreFenceCommand {
    static let usage = """
        usage: silentshard node restore-fence --database PATH|URL --master-key PATH [--reason TEXT]
          after restoring the node database from a backup (every node process of the role stopped):
          starts a new presignature epoch, deletes every unused presignature stored before it (apps drop
          theirs at their next reconcile), records the fence in the store; prints what it invalidated
        """

    static func main(_ arguments: [String]) -> Int32 {
        do {
            var options: [String: String] = [:]
            let environment = ProcessInfo.processInfo.environment
            for (flag, variable) in ["--database": "SILENTSHARD_DATABASE", "--master-key": "SILENTSHARD_MASTER_KEY"] {
                if let value = environment[variable], !value.isEmpty { options[flag] = value }
            }
            var iterator = arguments.makeIterator()
            while let argument = iterator.next() {
                if argument == "--help" || argument == "-h" {
                    print(usage)
                    return 0
                }
                var name = argument, value: String?
                if let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    value = String(argument[argument.index(after: equals)...])
                }
                guard ["--database", "--master-key", "--reason"].contains(name) else {
                    throw NodeCommand.Failure("unknown option \(name)")
                }
                guard let given = value ?? iterator.next() else { throw NodeCommand.Failure("\(name) needs a value") }
                options[name] = given
            }
            guard let database = options["--database"], let masterKeyPath = options["--master-key"] else {
                throw NodeCommand.Failure("restore-fence needs --database and --master-key")
            }
            let location = NodeStoreLocation(database)
            if case .sqlite = location, !FileManager.default.fileExists(atPath: database) {
                throw NodeCommand.Failure("--database: \(database) does not exist")
            }
            let masterKey = try NodeCommand.loadOrGenerateMasterKey(path: masterKeyPath, generate: false)
            let store = try NodeShareStore(location: location, masterKey: masterKey)
            let fence = try store.restoreFence(reason: "operator: " + (options["--reason"] ?? "restore-fence after a restore"))
            print("""
                restore fence recorded in \(location.redactedDescription):
                  presignatures invalidated: \(fence.presignaturesDeleted)
                  presignature epoch: \(Hex.encode(fence.oldEpoch)) → \(Hex.encode(fence.newEpoch))
                  store identity: \(fence.identityBefore) → \(fence.identityAfter)
                finish records are kept (each answers only its own identical request); start the node processes now
                """)
            return 0
        } catch {
            FileHandle.standardError.write(Data("silentshard node restore-fence: \(error)\n\n\(usage)\n".utf8))
            return 2
        }
    }
}
