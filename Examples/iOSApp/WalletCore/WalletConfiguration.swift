import Foundation

/// Where the sample wallet's node is and how the app proves who it is. A real app gets `cloudVerifyingKey` out
/// of band (shipped with the app or from its backend over TLS), never from the node it is about to trust.
public struct WalletConfiguration: Sendable, Equatable {
    /// The node's WebSocket URL, e.g. `wss://node.example.com`.
    public var nodeURL: String
    /// The node's Ed25519 verifying key, 64 hex characters.
    public var cloudVerifyingKey: String
    /// The app backend's bearer token for the node (nil: the node needs none).
    public var authenticationToken: String?

    public init(nodeURL: String, cloudVerifyingKey: String, authenticationToken: String? = nil) {
        self.nodeURL = nodeURL
        self.cloudVerifyingKey = cloudVerifyingKey
        self.authenticationToken = authenticationToken
    }
}
