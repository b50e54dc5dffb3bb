// Example 1 of the seed "Custom WebSocket client": the default transport.
//
// Pass a `WebsocketConfig` to `duoInitiator` and the SDK builds and owns a `DuoNetworkClient` (a
// WebSocket per protocol step at /v3/{algorithm}/{action}, subprotocol `duo-instance`). Nothing to
// implement.
//
//   swift run example-default-websocket                                  # starts its own node
//   swift run example-default-websocket --node ws://127.0.0.1:8080 --cloud-key <64 hex>
//
// Exit status 0 only if every signature verified.
import ExampleSupport
import Foundation
import duo

let status = await ExampleRun.main("default WebsocketConfig") { target in
    guard let url = target.url else { return false }

    // Where the node is. Set `authenticationToken` if your node checks tokens: the client sends it
    // as the first (text) message of every step.
    let websocketConfig = WebsocketConfig(url: url)

    // The node's Ed25519 public key (64 hex). Ship it with the app or in signed remote config;
    // never fetch it from the node you are about to trust.
    let cloudPublicKey = target.cloudVerifyingKey

    // The device key that signs every session SETUP (Ed25519 here; P-256 works too, e.g. a
    // Secure Enclave key behind your own `MessageSigner`). The node binds each key to it.
    let messageSigner = SoftwareEd25519MessageSigner()

    // Where the app keeps its keyshares. In memory for the example; in an app use an encrypted store:
    // `KeychainStorageClient` on Apple, `SQLiteStorageClient.encrypted(path:keyProvider:)` elsewhere
    // (docs/storage.md).
    let storageClient = InMemoryStorageClient()

    // The seed's code, as is: one session per algorithm.
    let ecdsa = SilentShard.ECDSA.duoInitiator(
        messageSigner: messageSigner,
        cloudVerifyingKey: cloudPublicKey,
        websocketConfig: websocketConfig,
        storageClient: storageClient
    )
    let eddsa = SilentShard.EdDSA.duoInitiator(
        messageSigner: messageSigner,
        cloudVerifyingKey: cloudPublicKey,
        websocketConfig: websocketConfig,
        storageClient: storageClient
    )

    // keygen → sign → verify for each algorithm (ExampleSupport/ExampleRun.swift). In app code:
    //   let keyshare = try await ecdsa.keygen()            // stored through storageClient
    //   let signature = try await ecdsa.signature(keyshare: keyshare, message: sha256OfTransaction)
    let ecdsaVerified = try await ExampleRun.keygenSignVerify(ecdsa)
    let eddsaVerified = try await ExampleRun.keygenSignVerify(eddsa)
    return ecdsaVerified && eddsaVerified
}
exit(status)
