import Foundation
import MPCCrypto
import SilentShardCore

/// `silentshard node-cert`: the trio operator's offline step (`docs/protocol/session.md` §1.3): issues a node
/// certificate with the cluster key, or creates a cluster key. Prints hex; never prints a secret key.
enum NodeCertCommand {
    static let usage = """
        usage: silentshard node-cert --cluster-key-file PATH --node-key PATH --role trio-a|trio-b --group HEX [--days N] [--serial N]
               silentshard node-cert --generate-cluster-key PATH
          --cluster-key-file PATH   the cluster's Ed25519 seed (64 hex); keep it offline
          --node-key PATH           the node's Ed25519 seed file (as for silentshard node)
          --group HEX               the 16-byte group id (32 hex) shared by nodes A and B of one cluster
          --days N                  validity (default 30, at most 400)
        Prints the certificate (284 hex characters) on stdout; --generate-cluster-key prints the
        cluster verifying key (the apps' cloudVerifyingKey).
        """

    static func main(_ arguments: [String]) -> Int32 {
        var options: [String: String] = [:]
        var iterator = arguments.makeIterator()
        while let name = iterator.next() {
            guard name.hasPrefix("--"), let value = iterator.next() else {
                FileHandle.standardError.write(Data("\(usage)\n".utf8))
                return 2
            }
            options[name] = value
        }
        do {
            if let path = options["--generate-cluster-key"] {
                guard !FileManager.default.fileExists(atPath: path) else { throw NodeCommand.Failure("\(path) exists; not overwriting") }
                let key = Ed25519.SigningKey()
                guard FileManager.default.createFile(atPath: path, contents: Data((Hex.encode(key.seed) + "\n").utf8),
                                                     attributes: [.posixPermissions: 0o600])
                else { throw NodeCommand.Failure("cannot write \(path)") }
                print(Hex.encode(key.verifyingKey.bytes))
                return 0
            }
            guard let clusterPath = options["--cluster-key-file"], let nodePath = options["--node-key"],
                  let role = options["--role"], let groupHex = options["--group"]
            else { throw NodeCommand.Failure("missing options") }
            let cluster = try NodeCommand.loadOrGenerateKey(path: clusterPath, generate: false)
            let node = try NodeCommand.loadOrGenerateKey(path: nodePath, generate: false)
            guard let group = try? Hex.decode(groupHex), group.count == 16 else { throw NodeCommand.Failure("--group must be 32 hex") }
            let certRole: NodeCertificate.Role
            switch role {
            case "trio-a": certRole = .trioA
            case "trio-b": certRole = .trioB
            default: throw NodeCommand.Failure("--role must be trio-a or trio-b")
            }
            let days = UInt64(options["--days"] ?? "30") ?? 0
            guard (1...400).contains(days) else { throw NodeCommand.Failure("--days must be 1…400") }
            let now = UInt64(Date().timeIntervalSince1970)
            let certificate = NodeCertificate(role: certRole, groupID: group, nodeKey: node.verifyingKey, notBefore: now - 60,
                                              notAfter: now - 60 + days * 86_400, serial: UInt64(options["--serial"] ?? "1") ?? 1,
                                              issuer: cluster)
            print(Hex.encode(certificate.encoded))
            return 0
        } catch {
            FileHandle.standardError.write(Data("silentshard node-cert: \(error)\n\n\(usage)\n".utf8))
            return 2
        }
    }
}
