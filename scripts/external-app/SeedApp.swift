// An app of the seeds' shape, outside the package: scripts/check-public-api typechecks it against the built
// modules without the package name, so it sees only what `import duo` / `import trio` offer an app.
import duo
import trio

final class LoggingClient: DuoNetworkClient {
    override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        try await super.connect(websocketAction: websocketAction, params: params)
    }
}

func run() async throws {
    let signer = SoftwareEd25519MessageSigner()
    let storage = InMemoryStorageClient()
    let config = WebsocketConfig(url: "wss://example.com")
    let duo = SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: String(repeating: "a", count: 64),
                                             websocketConfig: config, storageClient: storage)
    let key = try await duo.keygen()
    let signature = try await duo.signature(keyshare: key, message: Data(repeating: 1, count: 32))
    _ = signature.rawRepresentation
    let custom = SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: "", networkClient: LoggingClient(websocketConfig: config),
                                                storageClient: storage)
    _ = custom
    // A provider of the seeds' shape (five actions) still routes duo presignatures (defaults from `sign`).
    struct SeedShapedActions: DuoNetworkActionProvider {
        var keygen: NetworkAction { DuoAction.ECDSA.Keygen() }
        var reconcile: NetworkAction { DuoAction.ECDSA.Reconcile() }
        var refresh: NetworkAction { DuoAction.ECDSA.KeyRefresh() }
        var sign: NetworkAction { DuoAction.ECDSA.Signature() }
        var `import`: NetworkAction { DuoAction.ECDSA.Import() }
    }
    _ = SeedShapedActions().preSignFinal.action
    // Presignatures that survive restarts, in both modes.
    let presignature = try await duo.preSignature(keyshare: key)
    _ = try await duo.preSignatureFinal(preSignature: presignature, message: Data(repeating: 2, count: 32))
    for stored in try await duo.reconcilePreSignatures(keyshare: key) where stored.pendingMessage != nil {
        _ = try await duo.preSignatureFinal(preSignature: stored, message: stored.pendingMessage ?? Data())
    }
    // Records encrypted at rest: over any store, over the file/SQLite built-ins, with the app's own key.
    struct AppKey: StorageKeyProvider {
        func storageKey() async throws -> StorageKey { try StorageKey(bytes: [UInt8](repeating: 1, count: StorageKey.byteCount)) }
    }
    let sealed: StorageClient = EncryptedStorageClient(wrapping: storage, keyProvider: AppKey())
    _ = (sealed, try FileStorageClient.encrypted(directory: "/tmp/x", keyProvider: AppKey()), StorageKey.random().description)
    _ = try SQLiteStorageClient.encrypted(path: "/tmp/x.sqlite", keyProvider: AppKey())
    _ = (KeychainAccessibility.afterFirstUnlockThisDeviceOnly, KeychainStorageClient.self, SecureEnclaveMessageSigner.self)
    do { _ = try await sealed.read(keyId: "") } catch let error as StorageError {
        if case .wrongStorageKey(let id) = error { print(id) }
    } catch let error as DeviceKeyError { print(error) }
    #if canImport(Security)
    let keychain = KeychainStorageClient(service: "com.example.wallet", sealKeyInSecureEnclave: SecureEnclaveMessageSigner.isAvailable)
    let deviceKey: MessageSigner = try SecureEnclaveMessageSigner.loadOrCreate(service: "com.example.wallet")
    _ = (keychain, deviceKey)
    #endif
    let trio = SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: "", websocketConfig: config, storageClient: storage)
    let tkey = try await trio.keygen()
    let tpresignature = try await trio.preSignature(keyshare: tkey, signer: .nodeB)
    _ = (tpresignature.signer, tpresignature.isConsumed, try await trio.preSignatures(keyshare: tkey).count)
    do { _ = try await trio.signature(keyshare: tkey, message: Data(), signer: .nodeB) } catch {
        if case .keyRetired(_, let parent, let path) = error { print(parent ?? "", path ?? "") }
    }
}
