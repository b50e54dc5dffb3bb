// What the trio seed's samples take from the app: a device signer, the cluster key, storage.
import trio

let messageSigner = SoftwareEd25519MessageSigner()
let cloudPublicKey = String(repeating: "ab", count: 32)
let storageClient = InMemoryStorageClient()
