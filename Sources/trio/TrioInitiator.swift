import Foundation
import SilentShardCore

extension SilentShard.ECDSA {
    /// A trio ECDSA session over the default WebSocket transport: the SDK builds and owns a
    /// `TrioNetworkClient` for `websocketConfig`. `cloudVerifyingKey` is the cluster key (64 hex
    /// characters) that certifies nodes A and B; a malformed key fails the first operation before any
    /// connection.
    public static func trioInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                     websocketConfig: WebsocketConfig, storageClient: any StorageClient) -> TrioSession {
        TrioSession(algorithm: .ecdsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                    storageClient: storageClient, networkClient: TrioNetworkClient(websocketConfig: websocketConfig),
                    actionProvider: .ecdsa)
    }

    /// A trio ECDSA session over a caller-supplied `TrioNetworkClient` (e.g. a subclass that hooks
    /// `connect`), with the stock `/v3/trio/{action}` routing.
    public static func trioInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                     networkClient: TrioNetworkClient, storageClient: any StorageClient) -> TrioSession {
        TrioSession(algorithm: .ecdsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                    storageClient: storageClient, networkClient: networkClient, actionProvider: .ecdsa)
    }

    /// A trio ECDSA session over any `NetworkClient`, routed by `actionProvider` (`.ecdsa` for the
    /// stock routing).
    public static func trioInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                     storageClient: any StorageClient, networkClient: any NetworkClient,
                                     actionProvider: some TrioNetworkActionProvider) -> TrioSession {
        TrioSession(algorithm: .ecdsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                    storageClient: storageClient, networkClient: networkClient, actionProvider: actionProvider)
    }
}

extension SilentShard.EdDSA {
    /// A trio EdDSA session over the default WebSocket transport (see the ECDSA overload).
    public static func trioInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                     websocketConfig: WebsocketConfig, storageClient: any StorageClient) -> TrioSession {
        TrioSession(algorithm: .eddsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                    storageClient: storageClient, networkClient: TrioNetworkClient(websocketConfig: websocketConfig),
                    actionProvider: .eddsa)
    }

    /// A trio EdDSA session over a caller-supplied `TrioNetworkClient`, with the stock
    /// `/v3/trio/eddsa/{action}` routing.
    public static func trioInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                     networkClient: TrioNetworkClient, storageClient: any StorageClient) -> TrioSession {
        TrioSession(algorithm: .eddsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                    storageClient: storageClient, networkClient: networkClient, actionProvider: .eddsa)
    }

    /// A trio EdDSA session over any `NetworkClient`, routed by `actionProvider` (`.eddsa` for the
    /// stock routing).
    public static func trioInitiator(messageSigner: any MessageSigner, cloudVerifyingKey: String,
                                     storageClient: any StorageClient, networkClient: any NetworkClient,
                                     actionProvider: some TrioNetworkActionProvider) -> TrioSession {
        TrioSession(algorithm: .eddsa, messageSigner: messageSigner, cloudVerifyingKey: cloudVerifyingKey,
                    storageClient: storageClient, networkClient: networkClient, actionProvider: actionProvider)
    }
}
