import Foundation
import SilentShardCore

/// `silentshard`: the SDK's command-line tool.
let usage = """
    silentshard \(SilentShard.version)

    usage: silentshard <command>

    commands:
      demo        the demo (for now: the primitive self-check; the duo/trio demo on an embedded
                  local node arrives with the cloud node)
      selfcheck   check the cryptographic primitives against known answers
      version     print the version
    """

let command = CommandLine.arguments.dropFirst().first ?? "help"
switch command {
case "demo":
    print("SilentShard demo: the duo/trio demo on an embedded local node is not built yet;")
    print("running the primitive self-check instead.\n")
    exit(SelfCheck.run() ? 0 : 1)
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
