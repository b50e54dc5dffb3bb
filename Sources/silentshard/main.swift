import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// `silentshard`: the SDK's command-line tool.
let usage = """
    silentshard \(SilentShard.version)

    usage: silentshard <command>

    commands:
      demo        duo keygen, sign, refresh, sign (ECDSA and EdDSA) over WebSocket against an
                  embedded node, then in-process protocol runs (trio presign/finish, derived keys)
                  [--json] machine-readable runs only; [--path m/…] soft path to sign under;
                  [--message HEX] the 32-byte hash (ECDSA) / the message (EdDSA);
                  [--log] every SDK operation and step event (bytes, ms, error kind) to stderr;
                  [--chains --json FILE] also sign Ethereum (personal_sign, EIP-712, EIP-1559),
                  Bitcoin regtest PSBT and Solana artifacts with the duo and trio nodes, verify
                  them and write them to FILE
      node        run the cloud node's HTTP + WebSocket server (silentshard node --help)
      load        load driver for a node or cluster: concurrent duo keygen + sign sessions with
                  retries, sessions/s, post-run checks (silentshard load --help)
      bench       latency, bytes and node throughput against the goals (silentshard bench --help)
      node-cert   trio operator: create a cluster key, issue a node certificate (node-cert --help)
      selfcheck   check the cryptographic primitives against known answers
      version     print the version
    """

// SILENTSHARD_COMPUTE_WIDTH=N splits DKLs23's per-OT loops over N cores (ChunkedParallelism; default 1).
if let text = ProcessInfo.processInfo.environment["SILENTSHARD_COMPUTE_WIDTH"], let width = Int(text), width >= 1 {
    ChunkedParallelism.width = width
}

let command = CommandLine.arguments.dropFirst().first ?? "help"
switch command {
case "demo":
    var options = NetworkedDemo.Options()
    var demoArguments = Array(CommandLine.arguments.dropFirst(2))
    // `--chains` writes to FILE, the argument after `--json` (`--chains --json FILE`; also `--json --chains FILE`).
    let chains = demoArguments.contains("--chains")
    for flag in ["--json", "--chains"] where chains && options.chainsFile == nil {
        if let index = demoArguments.firstIndex(of: flag), index + 1 < demoArguments.count,
           !demoArguments[index + 1].hasPrefix("--") {
            options.chainsFile = demoArguments.remove(at: index + 1)
        }
    }
    var arguments = demoArguments.makeIterator()
    while let argument = arguments.next() {
        switch argument {
        case "--json": options.json = true
        case "--chains": break
        case "--help", "-h":
            print(usage)
            exit(0)
        case "--log": options.log = true
        case "--path":
            guard let path = arguments.next() else { FileHandle.standardError.write(Data("--path needs a value\n".utf8)); exit(2) }
            options.path = path
        case "--message":
            guard let text = arguments.next(), let bytes = try? Hex.decode(text) else {
                FileHandle.standardError.write(Data("--message needs hex\n".utf8))
                exit(2)
            }
            options.message = Data(bytes)
        default:
            FileHandle.standardError.write(Data("unknown demo option \(argument)\n\n\(usage)\n".utf8))
            exit(2)
        }
    }
    if chains && options.chainsFile == nil {
        FileHandle.standardError.write(Data("--chains needs --json FILE\n".utf8))
        exit(2)
    }
    if options.json {
        do { exit(try await NetworkedDemo.run(options) ? 0 : 1) } catch {
            FileHandle.standardError.write(Data("demo failed: \(error)\n".utf8))
            exit(1)
        }
    }
    print("SilentShard demo: the primitive self-check, duo over WebSocket against an embedded node, trio over")
    print("WebSocket against embedded nodes A and B, then protocols with every party in this process (trio")
    print("presign/finish until the trio node serves it).\n")
    guard SelfCheck.run() else { exit(1) }
    print("")
    do {
        guard try await NetworkedDemo.run(options) else {
            FileHandle.standardError.write(Data("demo failed: a signature did not verify\n".utf8))
            exit(1)
        }
        print("")
        try Demo.run()
    } catch {
        FileHandle.standardError.write(Data("demo failed: \(error)\n".utf8))
        exit(1)
    }
case "node":
    exit(await NodeCommand.main(Array(CommandLine.arguments.dropFirst(2))))
case "load":
    exit(await LoadCommand.main(Array(CommandLine.arguments.dropFirst(2))))
case "bench":
    exit(await BenchCommand.main(Array(CommandLine.arguments.dropFirst(2))))
case "node-cert":
    exit(NodeCertCommand.main(Array(CommandLine.arguments.dropFirst(2))))
case "selfcheck":
    exit(SelfCheck.run() ? 0 : 1)
case "version", "--version":
    print(SilentShard.version)
case "help", "--help", "-h":
    print(usage)
default:
    FileHandle.standardError.write(Data("unknown command '\(command)'\n\n\(usage)\n".utf8))
    exit(2)
}
