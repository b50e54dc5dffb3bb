import Foundation

/// Where an example's app talks to: a node given on the command line
/// (`--node ws://HOST:PORT --cloud-key HEX`), or, with no arguments, an ``EmbeddedNode`` it starts
/// itself.
public struct ExampleTarget: Sendable {
    /// The node's URL for `WebsocketConfig` (nil for an embedded node that does not listen).
    public let url: String?
    /// The node's Ed25519 verifying key, 64 hex characters (the seeds' `cloudVerifyingKey`).
    public let cloudVerifyingKey: String
    /// The embedded node, if this example started one.
    public let embedded: EmbeddedNode?

    /// Parses `arguments` (without the program name). `allowRemote: false` refuses `--node` (the
    /// in-process example has no socket to point elsewhere).
    public static func make(arguments: [String], allowRemote: Bool = true, listen: Bool = true) throws -> ExampleTarget {
        var node: String?, key: String?
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--node" where allowRemote: node = iterator.next()
            case "--cloud-key" where allowRemote: key = iterator.next()
            default: throw ExampleError.usage(allowRemote ? "usage: [--node ws://HOST:PORT --cloud-key HEX]" : "usage: (no arguments)")
            }
        }
        switch (node, key) {
        case let (node?, key?):
            return ExampleTarget(url: node, cloudVerifyingKey: key, embedded: nil)
        case (nil, nil):
            let embedded = try EmbeddedNode(listen: listen)
            return ExampleTarget(url: embedded.url, cloudVerifyingKey: embedded.cloudVerifyingKey, embedded: embedded)
        default:
            throw ExampleError.usage("--node and --cloud-key go together")
        }
    }
}

/// Why an example stopped before running.
public enum ExampleError: Error, CustomStringConvertible {
    case usage(String)

    public var description: String {
        switch self {
        case .usage(let text): text
        }
    }
}
