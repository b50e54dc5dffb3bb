import Foundation
import MPCCrypto
import SilentShardCore
import trio

/// Times trio operations through a `TrioSession` over loopback WebSocket against node processes A and
/// B. Every signature is verified outside the timed region; exported keys must match.
enum TrioBench {
    static let operations = ["keygen", "sign", "preSign", "preSignFinal", "refresh", "recover", "export", "import",
                             "hardDerivation"]

    /// Counts what the app sends, WebSocket messages and POST bodies (preSignFinal).
    final class CountingClient: TrioNetworkClient, @unchecked Sendable {
        private let counter = LockedValue(0)
        var bytesSent: Int { counter.withLock { $0 } }
        func reset() { counter.withLock { $0 = 0 } }

        override func send(bytes: Data) async throws {
            counter.withLock { $0 += bytes.count }
            try await super.send(bytes: bytes)
        }

        override func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
            counter.withLock { $0 += body.count }
            return try await super.sendPostRequest(action: action, params: params, body: body)
        }
    }

    /// - Parameters:
    ///   - entryPort: where the app connects (default node A; `--rtt` passes a delaying proxy in front of A).
    ///   - transport: the rows' transport label.
    static func run(nodes: TrioNodePair, algorithm: Keyshare.Algorithm, operations: Set<String>, runs: Int,
                    warmup: Int, entryPort: Int? = nil, transport: String = "websocket") async throws -> [BenchResult] {
        let config = BenchTLS.config(port: entryPort ?? nodes.nodeA.port, tls: nodes.tls, token: TrioNodePair.token)
        let client = CountingClient(websocketConfig: config)
        let signer = SoftwareEd25519MessageSigner()
        func session(_ storage: any StorageClient = InMemoryStorageClient()) -> TrioSession {
            algorithm == .ecdsa
                ? SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: nodes.clusterKey, networkClient: client,
                                                  storageClient: storage)
                : SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: nodes.clusterKey, networkClient: client,
                                                  storageClient: storage)
        }
        let main = session()
        var results: [BenchResult] = []
        func record(_ operation: String, _ times: [Double], _ bytes: [Int]) {
            results.append(BenchResult(mode: "trio", algorithm: algorithm == .ecdsa ? "ecdsa" : "eddsa", operation: operation,
                                       transport: transport, sample: BenchSample(times),
                                       bytesSentPerParty: bytes.sorted()[bytes.count / 2], baselineRatio: nil))
        }
        func measure(_ operation: String, _ body: () async throws -> Void) async throws {
            var times: [Double] = [], bytes: [Int] = []
            for index in 0..<(warmup + runs) {
                client.reset()
                let elapsed = try await milliseconds(body)
                if index >= warmup {
                    times.append(elapsed)
                    bytes.append(client.bytesSent)
                }
            }
            record(operation, times, bytes)
        }
        func message() -> Data { algorithm == .ecdsa ? Data(SecureRandom.bytes(count: 32)) : Data(SecureRandom.bytes(count: 64)) }
        func check(_ signature: Signature, _ message: Data, _ keyshare: Keyshare) throws {
            guard NetworkedDemo.verifies(signature, message: message, key: Array(keyshare.publicKey), algorithm: algorithm) else {
                throw BenchError("a trio \(algorithm) signature did not verify")
            }
        }

        var keyshare = try await main.keygen()
        if operations.contains("keygen") { try await measure("keygen") { _ = try await main.keygen() } }
        if operations.contains("sign") {
            let signing = keyshare
            // Every signature is verified, after the timed runs: only the SDK call is timed.
            var signed: [(Signature, Data)] = []
            try await measure("sign") {
                let m = message()
                signed.append((try await main.signature(keyshare: signing, message: m), m))
            }
            for (signature, m) in signed { try check(signature, m, signing) }
        }
        if operations.contains("preSign") || operations.contains("preSignFinal") {
            // preSign and preSignFinal timed separately: each run presigns, then finishes over one POST.
            var presignTimes: [Double] = [], presignBytes: [Int] = [], finalTimes: [Double] = [], finalBytes: [Int] = []
            for index in 0..<(warmup + runs) {
                client.reset()
                var presignature: PreSignature?
                let presign = try await milliseconds { presignature = try await main.preSignature(keyshare: keyshare) }
                let presignSent = client.bytesSent
                guard let presignature else { throw BenchError("no presignature") }
                client.reset()
                let m = message()
                var signature: Signature?
                let final = try await milliseconds {
                    signature = try await main.preSignatureFinal(preSignature: presignature, message: m)
                }
                guard let signature else { throw BenchError("no signature") }
                try check(signature, m, keyshare)
                if index >= warmup {
                    presignTimes.append(presign)
                    presignBytes.append(presignSent)
                    finalTimes.append(final)
                    finalBytes.append(client.bytesSent)
                }
            }
            if operations.contains("preSign") { record("preSign", presignTimes, presignBytes) }
            if operations.contains("preSignFinal") { record("preSignFinal", finalTimes, finalBytes) }
        }
        if operations.contains("refresh") {
            try await measure("refresh") {
                let refreshed = try await main.keyRefresh(keyshare: keyshare)
                guard refreshed.publicKey == keyshare.publicKey else { throw BenchError("refresh changed the key") }
                keyshare = refreshed
            }
        }
        if operations.contains("export") {
            let exporting = keyshare
            try await measure("export") {
                let exported = try await main.export(keyshare: exporting)
                guard NetworkedDemo.matches(exported), exported.publicKey == exporting.publicKey else {
                    throw BenchError("the exported key does not match")
                }
            }
        }
        if operations.contains("recover") && algorithm == .ecdsa {
            // Each run: the app has lost its share (fresh storage); A and B re-share the same key.
            try await measure("recover") {
                let recovered = try await session().recovery(keysharePublicKey: keyshare.publicKey)
                guard recovered.publicKey == keyshare.publicKey else { throw BenchError("recovery changed the key") }
                keyshare = recovered
            }
        }
        if operations.contains("import") {
            let importer = session()
            try await measure("import") {
                let privateKey = algorithm == .ecdsa ? Secp256k1.Scalar.random().bytes : SecureRandom.bytes(count: 32)
                _ = try await importer.import(privateKey: Data(privateKey), rootChainCode: Data(SecureRandom.bytes(count: 32)))
            }
        }
        if operations.contains("hardDerivation") && algorithm == .ecdsa {
            let deriving = session()
            let parent = try await deriving.keygen()
            var counter = 0
            try await measure("hardDerivation") {
                counter += 1
                let child = try await deriving.hardDerivation(keyshare: parent, path: "m/44'/60'/\(counter)'")
                guard child.keyId != parent.keyId else { throw BenchError("hard derivation returned the parent") }
            }
        }
        return results
    }
}
