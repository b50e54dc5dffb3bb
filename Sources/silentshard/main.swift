import Foundation
import SilentShardCore

/// `silentshard`: the SDK's command-line tool.
let usage = """
    silentshard \(SilentShard.version)

    usage: silentshard <command>

    commands:
      demo        threshold keygen and signing, ECDSA (DKLs23) and EdDSA (FROST), every party in
                  this process (the networked duo/trio demo on an embedded node comes with the node)
      node        run the cloud node's HTTP + WebSocket server (silentshard node --help)
      selfcheck   check the cryptographic primitives against known answers
      version     print the version
    """

let command = CommandLine.arguments.dropFirst().first ?? "help"
switch command {
case "demo":
    print("SilentShard demo: every party runs in this process; the networked demo on an embedded")
    print("local node arrives with the cloud node.\n")
    guard SelfCheck.run() else { exit(1) }
    print("")
    do {
        try Demo.run()
    } catch {
        FileHandle.standardError.write(Data("demo failed: \(error)\n".utf8))
        exit(1)
    }
case "node":
    exit(await NodeCommand.main(Array(CommandLine.arguments.dropFirst(2))))
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
