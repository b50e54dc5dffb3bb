import CloudNode
import Foundation
import MPCCrypto
import Synchronization
import duo

/// The duo demo over the network: an embedded node (libwebsockets on a loopback port, a temporary
/// SQLite share store) and the SDK's `DuoSession` driving it through the WebSocket client.
enum NetworkedDemo {
    /// The seed's second transport style: a `DuoNetworkClient` subclass, here counting bytes sent.
    final class CountingClient: DuoNetworkClient, @unchecked Sendable {
        private let counter = Mutex(0)
        var bytesSent: Int { counter.withLock { $0 } }
        func reset() { counter.withLock { $0 = 0 } }

        override func send(bytes: Data) async throws {
            counter.withLock { $0 += bytes.count }
            try await super.send(bytes: bytes)
        }
    }

    struct Row {
        let algorithm: String
        let operation: String
        let milliseconds: Double
        let bytesSent: Int
        let verified: Bool
    }

    static func run() async throws -> Bool {
        let nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-demo-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
        let runner = DuoStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow())
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: nodeKey, verifier: NoTokenVerifier(),
            stepHandlers: StepHandlerRegistry(fallback: DuoStepHandler(runner: runner)), logger: .silent))
        let port = try server.start()
        print("== duo over WebSocket: embedded node on ws://127.0.0.1:\(port) (SQLite store, node key \(Hex.encode(nodeKey.verifyingKey.bytes).prefix(16))…)")
        var rows: [Row] = []
        do {
            for algorithm in [Keyshare.Algorithm.ecdsa, .eddsa] {
                rows += try await duo(algorithm: algorithm, port: port, cloudKey: Hex.encode(nodeKey.verifyingKey.bytes))
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        print("| algorithm | operation | ms | bytes sent by the app | verified |")
        print("|---|---|---:|---:|---|")
        for row in rows {
            print("| \(row.algorithm) | \(row.operation) | \(String(format: "%.1f", row.milliseconds)) | \(row.bytesSent) | \(row.verified ? "yes" : "NO") |")
        }
        return rows.allSatisfy(\.verified)
    }

    static func duo(algorithm: Keyshare.Algorithm, port: Int, cloudKey: String) async throws -> [Row] {
        let client = CountingClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)"))
        let storage = InMemoryStorageClient()
        let signer = SoftwareEd25519MessageSigner()
        let name = algorithm == .ecdsa ? "ECDSA" : "EdDSA"
        let session = algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                             storageClient: storage)
            : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                             storageClient: storage)
        let text = Data("Hello from SilentShard".utf8)
        let message = algorithm == .ecdsa ? Data(SHA256.hash(Array(text))) : text
        var rows: [Row] = []

        func timed<T>(_ operation: String, _ body: () async throws -> T, verify: (T) -> Bool) async throws -> T {
            client.reset()
            let start = ContinuousClock.now
            let value = try await body()
            let elapsed = ContinuousClock.now - start
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            rows.append(Row(algorithm: name, operation: operation, milliseconds: milliseconds, bytesSent: client.bytesSent,
                            verified: verify(value)))
            return value
        }

        let keyshare = try await timed("keygen", { try await session.keygen() }, verify: { _ in true })
        print("\(name) public key \(Hex.encode(Array(keyshare.publicKey)))")
        _ = try await timed("sign", { try await session.signature(keyshare: keyshare, message: message) },
                            verify: { verifies($0, message: message, keyshare: keyshare) })
        let refreshed = try await timed("refresh", { try await session.keyRefresh(keyshare: keyshare) },
                                        verify: { $0.publicKey == keyshare.publicKey })
        _ = try await timed("signAfterRefresh", { try await session.signature(keyshare: refreshed, message: message) },
                            verify: { verifies($0, message: message, keyshare: refreshed) })
        return rows
    }

    /// Verifies with libsecp256k1 (and recovers the key from r, s, v) or libsodium.
    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) -> Bool {
        let raw = Array(signature.rawRepresentation)
        switch keyshare.algorithm {
        case .ecdsa:
            guard raw.count == 64,
                  let parsed = try? Secp256k1.ECDSASignature(r: Array(raw[0..<32]), s: Array(raw[32..<64]),
                                                             recoveryId: signature.recoveryId ?? 0),
                  let key = try? Secp256k1.Point(bytes: Array(keyshare.publicKey)),
                  let recovered = try? Secp256k1.ECDSA.recoverPublicKey(parsed, hash: Array(message))
            else { return false }
            return Secp256k1.ECDSA.verify(parsed, hash: Array(message), publicKey: key) && recovered == key
        case .eddsa:
            guard let key = try? Ed25519.VerifyingKey(bytes: Array(keyshare.publicKey)) else { return false }
            return key.isValidSignature(raw, for: Array(message))
        }
    }
}
