import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import duo

/// One timed operation of the bench (issue 9's JSON row).
struct BenchResult: Sendable {
    var mode: String
    var algorithm: String
    var operation: String
    var transport: String
    var sample: BenchSample
    /// Bytes the app sent in one run (the median run's count; the node sends about as many).
    var bytesSentPerParty: Int
    /// median / the single-party baseline of the algorithm (libsecp256k1 or libsodium sign).
    var baselineRatio: Double?
    /// `--rtt`: the round-trip time the delaying proxy added, and (median here − median without it) / RTT.
    var rttMs: Int? = nil
    var roundTrips: Double? = nil
    /// `--tls`: the WebSocket ran over wss (TLS 1.3 to a node with a self-signed certificate).
    var tls = false
}

/// Times duo operations through a `DuoSession` on one transport. Every signature is verified
/// (outside the timed region) under the key it claims; a failure aborts the bench.
enum DuoBench {
    /// A session and its app-side byte counter.
    struct Target {
        let session: DuoSession
        let bytesSent: () -> Int
        let resetCount: () -> Void
        /// The backend's POST of an export request (nil: this transport has no HTTP endpoint).
        var exportPost: ((DuoExportRequest) async throws -> Data)?
        /// Whether the app's client can POST (preSignFinal).
        var hasPostRoute: Bool { exportPost != nil }
    }

    static let operations = ["keygen", "sign", "refresh", "import", "export", "preSign", "preSignFinal"]

    /// The bench's app and backend token (the node's token file grants it every duo scope, export too).
    static let token = "silentshard-bench-token"

    static func run(_ target: Target, algorithm: Keyshare.Algorithm, operations: Set<String>, runs: Int, warmup: Int,
                    transport: String) async throws -> [BenchResult] {
        let session = target.session
        var results: [BenchResult] = []
        func measure(_ operation: String, _ body: () async throws -> Void) async throws {
            var times: [Double] = [], bytes: [Int] = []
            for index in 0..<(warmup + runs) {
                target.resetCount()
                let elapsed = try await milliseconds(body)
                if index >= warmup {
                    times.append(elapsed)
                    bytes.append(target.bytesSent())
                }
            }
            results.append(BenchResult(mode: "duo", algorithm: algorithm == .ecdsa ? "ecdsa" : "eddsa", operation: operation,
                                       transport: transport, sample: BenchSample(times),
                                       bytesSentPerParty: bytes.sorted()[bytes.count / 2], baselineRatio: nil))
        }

        var keyshare = try await session.keygen()
        if operations.contains("keygen") {
            try await measure("keygen") { _ = try await session.keygen() }
        }
        if operations.contains("sign") {
            let signing = keyshare
            // Every signature is verified, after the timed runs: only the SDK call is timed.
            var signed: [(Signature, Data)] = []
            try await measure("sign") {
                let message = algorithm == .ecdsa ? Data(SecureRandom.bytes(count: 32)) : Data(SecureRandom.bytes(count: 64))
                signed.append((try await session.signature(keyshare: signing, message: message), message))
            }
            let key = try NetworkedDemo.childPublicKey(signing, path: "m")
            for (signature, message) in signed {
                guard NetworkedDemo.verifies(signature, message: message, key: key, algorithm: algorithm) else {
                    throw BenchError("a \(algorithm) signature did not verify")
                }
            }
        }
        if (operations.contains("preSign") || operations.contains("preSignFinal")), target.hasPostRoute {
            // Protocol v1.3: preSign and preSignFinal timed separately; each run presigns, then finishes over one POST.
            var presignTimes: [Double] = [], presignBytes: [Int] = [], finalTimes: [Double] = [], finalBytes: [Int] = []
            var signed: [(Signature, Data)] = []
            for index in 0..<(warmup + runs) {
                target.resetCount()
                var presignature: PreSignature?
                let presign = try await milliseconds { presignature = try await session.preSignature(keyshare: keyshare) }
                let presignSent = target.bytesSent()
                guard let presignature else { throw BenchError("no presignature") }
                target.resetCount()
                let message = algorithm == .ecdsa ? Data(SecureRandom.bytes(count: 32)) : Data(SecureRandom.bytes(count: 64))
                var signature: Signature?
                let final = try await milliseconds {
                    signature = try await session.preSignatureFinal(preSignature: presignature, message: message)
                }
                guard let signature else { throw BenchError("no signature") }
                signed.append((signature, message))
                if index >= warmup {
                    presignTimes.append(presign)
                    presignBytes.append(presignSent)
                    finalTimes.append(final)
                    finalBytes.append(target.bytesSent())
                }
            }
            let key = try NetworkedDemo.childPublicKey(keyshare, path: "m")
            for (signature, message) in signed where !NetworkedDemo.verifies(signature, message: message, key: key, algorithm: algorithm) {
                throw BenchError("a presigned \(algorithm) signature did not verify")
            }
            for (operation, times, bytes) in [("preSign", presignTimes, presignBytes), ("preSignFinal", finalTimes, finalBytes)]
            where operations.contains(operation) {
                results.append(BenchResult(mode: "duo", algorithm: algorithm == .ecdsa ? "ecdsa" : "eddsa", operation: operation,
                                           transport: transport, sample: BenchSample(times),
                                           bytesSentPerParty: bytes.sorted()[bytes.count / 2], baselineRatio: nil))
            }
        }
        if operations.contains("refresh") {
            try await measure("refresh") {
                let refreshed = try await session.keyRefresh(keyshare: keyshare)
                guard refreshed.publicKey == keyshare.publicKey else { throw BenchError("refresh changed the key") }
                keyshare = refreshed
            }
        }
        if operations.contains("export"), let post = target.exportPost {
            let exporting = keyshare
            try await measure("export") {
                let exported = try await session.export(keyshare: exporting, via: post)
                guard NetworkedDemo.matches(exported), exported.publicKey == exporting.publicKey else {
                    throw BenchError("the exported key does not match")
                }
            }
        }
        if operations.contains("import") {
            try await measure("import") {
                let privateKey = algorithm == .ecdsa ? Secp256k1.Scalar.random().bytes : SecureRandom.bytes(count: 32)
                _ = try await session.import(privateKey: Data(privateKey), rootChainCode: Data(SecureRandom.bytes(count: 32)))
            }
        }
        return results
    }

    /// A session over the WebSocket client to the node at `port`.
    static func websocketTarget(port: Int, cloudKey: String, algorithm: Keyshare.Algorithm, tls: BenchTLS? = nil) -> Target {
        let config = BenchTLS.config(port: port, tls: tls, token: token)
        let client = NetworkedDemo.CountingClient(websocketConfig: config)
        let session = makeSession(algorithm: algorithm, cloudKey: cloudKey, client: client)
        return Target(session: session, bytesSent: { client.bytesSent }, resetCount: { client.reset() }, exportPost: { request in
            // The backend's call; its body counts as bytes the app side sent.
            client.add(request.body.count)
            guard let url = URL(string: BenchTLS.httpURL(port: port, tls: tls) + "\(request.path)?params=\(request.params)") else {
                throw BenchError("export URL")
            }
            return try await WebSocketTransport.post(url: url, body: request.body, bearerToken: token,
                                                     settings: WebSocketSettings(config))
        })
    }

    /// A session over the in-process transport to a `NodeStepRunner` with a temporary store.
    static func memoryTarget(algorithm: Keyshare.Algorithm, directory: String) throws -> Target {
        let nodeKey = Ed25519.SigningKey()
        let store = try NodeShareStore(path: directory + "/memory-\(algorithm).sqlite", masterKey: .random())
        let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow())
        let client = InProcessDuoClient(runner: runner)
        let cloudKey = Hex.encode(nodeKey.verifyingKey.bytes), signer = SoftwareEd25519MessageSigner()
        let session = algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: InMemoryStorageClient(),
                                             networkClient: client, actionProvider: .ecdsa)
            : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: InMemoryStorageClient(),
                                             networkClient: client, actionProvider: .eddsa)
        return Target(session: session, bytesSent: { client.bytesSent }, resetCount: { client.resetCount() })
    }

    static func makeSession(algorithm: Keyshare.Algorithm, cloudKey: String, client: DuoNetworkClient) -> DuoSession {
        algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                             networkClient: client, storageClient: InMemoryStorageClient())
            : SilentShard.EdDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                             networkClient: client, storageClient: InMemoryStorageClient())
    }
}
