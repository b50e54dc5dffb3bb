import Foundation
import SilentShardCore

extension SilentShard.ECDSA {
    /// A duo ECDSA session over the default WebSocket transport: the SDK builds and owns a
    /// `DuoNetworkClient` for `websocketConfig`. `cloudVerifyingKey` is the node's Ed25519 public key
    /// as 64 hex characters; a malformed key fails the first operation before any connection.
    public static func duoInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                    websocketConfig: WebsocketConfig, storageClient: any StorageClient) -> DuoSession {
        DuoSession(algorithm: .ecdsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                   storageClient: storageClient, networkClient: DuoNetworkClient(websocketConfig: websocketConfig),
                   actionProvider: .ecdsa)
    }

    /// A duo ECDSA session over a caller-supplied `DuoNetworkClient` (e.g. a subclass that hooks
    /// `connect`), with the stock `/v3/ecdsa/{action}` routing.
    public static func duoInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                    networkClient: DuoNetworkClient, storageClient: any StorageClient) -> DuoSession {
        DuoSession(algorithm: .ecdsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                   storageClient: storageClient, networkClient: networkClient, actionProvider: .ecdsa)
    }

    /// A duo ECDSA session over any `NetworkClient`, routed by `actionProvider` (`.ecdsa` for the stock
    /// routing).
    public static func duoInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                    storageClient: any StorageClient, networkClient: any NetworkClient,
                                    actionProvider: some DuoNetworkActionProvider) -> DuoSession {
        DuoSession(algorithm: .ecdsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                   storageClient: storageClient, networkClient: networkClient, actionProvider: actionProvider)
    }
}

extension SilentShard.EdDSA {
    /// A duo EdDSA session over the default WebSocket transport (see the ECDSA overload).
    public static func duoInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                    websocketConfig: WebsocketConfig, storageClient: any StorageClient) -> DuoSession {
        DuoSession(algorithm: .eddsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                   storageClient: storageClient, networkClient: DuoNetworkClient(websocketConfig: websocketConfig),
                   actionProvider: .eddsa)
    }

    /// A duo EdDSA session over a caller-supplied `DuoNetworkClient`, with the stock
    /// `/v3/eddsa/{action}` routing.
    public static func duoInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                    networkClient: DuoNetworkClient, storageClient: any StorageClient) -> DuoSession {
        DuoSession(algorithm: .eddsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                   storageClient: storageClient, networkClient: networkClient, actionProvider: .eddsa)
    }

    /// A duo EdDSA session over any `NetworkClient`, routed by `actionProvider` (`.eddsa` for the stock
    /// routing).
    public static func duoInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                    storageClient: any StorageClient, networkClient: any NetworkClient,
                                    actionProvider: some DuoNetworkActionProvider) -> DuoSession {
        DuoSession(algorithm: .eddsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                   storageClient: storageClient, networkClient: networkClient, actionProvider: actionProvider)
    }
}
