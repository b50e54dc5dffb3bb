// What the duo seed's samples take from the app: a device signer, the node's verifying key, storage.
import duo

let messageSigner = SoftwareEd25519MessageSigner()
let cloudPublicKey = String(repeating: "ab", count: 32)
let storageClient = InMemoryStorageClient()
