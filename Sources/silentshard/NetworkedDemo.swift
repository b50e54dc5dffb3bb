import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import duo

/// The duo demo over the network (then the trio demo, `TrioDemo`): an embedded node (libwebsockets on a loopback port, a temporary
/// SQLite share store) and the SDK's `DuoSession` driving it through the WebSocket client.
enum NetworkedDemo {
    /// The seed's second transport style: a `DuoNetworkClient` subclass, here counting bytes sent.
    final class CountingClient: DuoNetworkClient, @unchecked Sendable {
        private let counter = LockedValue(0)
        var bytesSent: Int { counter.withLock { $0 } }
        func reset() { counter.withLock { $0 = 0 } }
        /// Counts bytes the app sent some other way (the export request its backend posts).
        func add(_ count: Int) { counter.withLock { $0 += count } }

        override func send(bytes: Data) async throws {
            counter.withLock { $0 += bytes.count }
            try await super.send(bytes: bytes)
        }

        override func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
            counter.withLock { $0 += body.count }
            return try await super.sendPostRequest(action: action, params: params, body: body)
        }
    }

    struct Row {
        var mode = "duo"
        let algorithm: String
        let operation: String
        let milliseconds: Double
        var bytesSent: Int
        let verified: Bool
        /// The `--json` fields of this run (issue 7's schema) besides the common ones.
        var fields: [String: JSONValue] = [:]
    }

    /// What to sign: a soft BIP32 path (default "m") and the message (hex; the 32-byte hash for ECDSA,
    /// the message itself for EdDSA; default: SHA-256 / the bytes of "Hello from SilentShard").
    struct Options {
        var path = "m"
        var message: Data?
        var json = false
        /// Every operation and step event to standard error (`SilentShardLoggers.standardError`).
        var log = false
        /// `--chains --json FILE`: also sign Ethereum, Bitcoin and Solana artifacts with each mode's nodes
        /// (`ChainsDemo`) and write them, verified, to this file.
        var chainsFile: String?
    }

    /// Prints the table (or, with `json`, only the JSON document) and returns whether all verified.
    static func run(_ options: Options = Options()) async throws -> Bool {
        let nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-demo-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
        let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow())
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: nodeKey, verifier: DemoVerifier(),
            stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
            postHandler: NodePostHandler(runner: runner), logger: .silent))
        let port = try server.start()
        if !options.json {
            print("== duo over WebSocket: embedded node on ws://127.0.0.1:\(port) (SQLite store, node key \(Hex.encode(nodeKey.verifyingKey.bytes).prefix(16))…)")
        }
        var rows: [Row] = []
        var chains: [JSONValue] = []
        do {
            for algorithm in [Keyshare.Algorithm.ecdsa, .eddsa] {
                rows += try await duo(algorithm: algorithm, port: port, cloudKey: Hex.encode(nodeKey.verifyingKey.bytes),
                                      options: options)
            }
            if options.chainsFile != nil {
                chains += try await ChainsDemo.entries(chainsParty(port: port, cloudKey: Hex.encode(nodeKey.verifyingKey.bytes),
                                                                   options: options))
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        rows += try await TrioDemo.rows(options, chains: &chains)
        if let file = options.chainsFile {
            try ChainsDemo.write(chains, to: file)
            if !options.json { print("chains: \(chains.count) verified entries written to \(file)") }
        }
        if options.json {
            let runs: [JSONValue] = rows.map { row in
                var object = row.fields
                object["mode"] = .string(row.mode)
                object["algorithm"] = .string(row.algorithm.lowercased())
                object["operation"] = .string(row.operation)
                object["verified"] = .bool(row.verified)
                object["ms"] = .number(row.milliseconds)
                object["bytesSent"] = .number(Double(row.bytesSent))
                return .object(object)
            }
            print(JSONValue.object(["runs": .array(runs)]).serialized)
            return rows.allSatisfy(\.verified)
        }
        print("| mode | algorithm | operation | ms | bytes sent by the app | verified |")
        print("|---|---|---|---:|---:|---|")
        for row in rows {
            print("| \(row.mode) | \(row.algorithm) | \(row.operation) | \(String(format: "%.1f", row.milliseconds)) | \(row.bytesSent) | \(row.verified ? "yes" : "NO") |")
        }
        return rows.allSatisfy(\.verified)
    }

    static func duo(algorithm: Keyshare.Algorithm, port: Int, cloudKey: String, options: Options) async throws -> [Row] {
        let client = CountingClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)"))
        let storage = InMemoryStorageClient()
        let signer = SoftwareEd25519MessageSigner()
        let name = algorithm == .ecdsa ? "ECDSA" : "EdDSA"
        let session = algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                             storageClient: storage)
            : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                             storageClient: storage)
        session.logger = options.log ? SilentShardLoggers.standardError : SilentShardLoggers.none
        let text = Data("Hello from SilentShard".utf8)
        let message = options.message ?? (algorithm == .ecdsa ? Data(SHA256.hash(Array(text))) : text)
        var rows: [Row] = []

        func timed<T>(_ operation: String, _ body: () async throws -> T, verify: (T) -> Bool,
                      fields: (T) throws -> [String: JSONValue] = { _ in [:] }) async throws -> T {
            client.reset()
            let start = ContinuousClock.now
            let value = try await body()
            let elapsed = ContinuousClock.now - start
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            rows.append(Row(algorithm: name, operation: operation, milliseconds: milliseconds, bytesSent: client.bytesSent,
                            verified: verify(value), fields: try fields(value)))
            return value
        }

        let keyshare = try await timed("keygen", { try await session.keygen() }, verify: { _ in true }, fields: { key in
            ["publicKey": .string(Hex.encode(Array(key.publicKey))), "chainCode": .string(Hex.encode(Array(key.rootChainCode)))]
        })
        if !options.json { print("\(name) public key \(Hex.encode(Array(keyshare.publicKey)))") }
        let child = try childPublicKey(keyshare, path: options.path)
        func signatureFields(_ signature: Signature) -> [String: JSONValue] {
            var fields: [String: JSONValue] = [
                "publicKey": .string(Hex.encode(Array(keyshare.publicKey))),
                "chainCode": .string(Hex.encode(Array(keyshare.rootChainCode))),
                "path": .string(options.path), "childPublicKey": .string(Hex.encode(child)),
                "message": .string(Hex.encode(Array(message))),
                "signature": .string(Hex.encode(Array(signature.rawRepresentation))),
            ]
            if let recoveryId = signature.recoveryId { fields["recoveryId"] = .number(Double(recoveryId)) }
            return fields
        }
        _ = try await timed("sign", { try await session.signature(keyshare: keyshare, message: message, chainPath: options.path) },
                            verify: { verifies($0, message: message, key: child, algorithm: algorithm) }, fields: signatureFields)
        let refreshed = try await timed("refresh", { try await session.keyRefresh(keyshare: keyshare) },
                                        verify: { $0.publicKey == keyshare.publicKey }, fields: { key in
            ["publicKey": .string(Hex.encode(Array(key.publicKey))), "chainCode": .string(Hex.encode(Array(key.rootChainCode)))]
        })
        _ = try await timed("signAfterRefresh", {
            try await session.signature(keyshare: refreshed, message: message, chainPath: options.path)
        }, verify: { verifies($0, message: message, key: child, algorithm: algorithm) }, fields: signatureFields)

        // Export: the app makes the request, "its backend" (here: this process) POSTs it to the node with
        // the backend credential, the app combines. bytesSent = the request body the app hands over.
        var requestBytes = 0
        let exported = try await timed("export", {
            try await session.export(keyshare: refreshed) { request in
                requestBytes = request.body.count
                guard let url = URL(string: "http://127.0.0.1:\(port)\(request.path)?params=\(request.params)") else {
                    throw SilentShardError.invalidConfiguration(reason: "export URL")
                }
                return try await WebSocketTransport.post(url: url, body: request.body, bearerToken: DemoVerifier.backendToken,
                                                         settings: WebSocketSettings(WebsocketConfig(url: "ws://127.0.0.1:\(port)")))
            }
        }, verify: { matches($0) }, fields: { key in
            ["privateKey": .string(Hex.encode([UInt8](key.privateKey))), "publicKey": .string(Hex.encode([UInt8](key.publicKey))),
             "chainCode": .string(Hex.encode([UInt8](key.chainCode)))]
        })
        rows[rows.count - 1].bytesSent = requestBytes
        if !options.json { print("\(name) exported key matches the public key: \(matches(exported) && exported.publicKey == keyshare.publicKey)") }
        return rows
    }

    /// `ChainsDemo`'s duo party: a `DuoSession` per algorithm against the embedded node on `port`.
    static func chainsParty(port: Int, cloudKey: String, options: Options) -> ChainsDemo.Party {
        let client = DuoNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)"))
        let signer = SoftwareEd25519MessageSigner()
        let sessions = [Keyshare.Algorithm.ecdsa, .eddsa].map { algorithm in
            let session = algorithm == .ecdsa
                ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                 storageClient: InMemoryStorageClient())
                : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                 storageClient: InMemoryStorageClient())
            session.logger = options.log ? SilentShardLoggers.standardError : SilentShardLoggers.none
            return session
        }
        func session(_ algorithm: Keyshare.Algorithm) -> DuoSession { algorithm == .ecdsa ? sessions[0] : sessions[1] }
        return ChainsDemo.Party(mode: "duo", keygen: { try await session($0).keygen() }, sign: { keyshare, message, path in
            try await session(keyshare.algorithm).signature(keyshare: keyshare, message: message, chainPath: path)
        })
    }

    /// privateKey·G == publicKey, recomputed with the primitives (ECDSA: big-endian scalar; EdDSA:
    /// little-endian scalar, not a seed).
    static func matches(_ key: ExportedKey) -> Bool {
        let secret = [UInt8](key.privateKey)
        switch key.algorithm {
        case .ecdsa:
            guard let scalar = try? Secp256k1.Scalar(nonZeroBytes: secret),
                  let computed = try? Secp256k1.Point(base: scalar).compressed() else { return false }
            return computed == [UInt8](key.publicKey)
        case .eddsa:
            guard let scalar = try? Ed25519.Scalar(nonZeroBytes: secret) else { return false }
            return Ed25519.Point(base: scalar).bytes == [UInt8](key.publicKey)
        }
    }

    /// The embedded node's tokens: the app's steps run without a token (development, like `--auth
    /// none`); the export POST needs the backend's credential, which carries scope `export`.
    struct DemoVerifier: TokenVerifier {
        static let backendToken = "demo-backend-" + Hex.encode(SecureRandom.bytes(count: 16))
        var name: String { "none + backend token" }
        var acceptsMissingToken: Bool { true }
        func verify(token: String?) async throws(AuthenticationError) -> Principal {
            guard let token else { return Principal(subject: "anonymous") }
            guard constantTimeEqual(Array(token.utf8), Array(Self.backendToken.utf8)) else { throw .invalidToken }
            // The backend acts for the demo's app user (the anonymous subject that owns the keys): the key's
            // owner must be the credential's subject (session.md §9.2).
            return Principal(subject: "anonymous", scopes: [Principal.exportScope])
        }
    }

    /// The public key that signs under `path` (soft BIP32 for ECDSA, BIP32-Ed25519 for EdDSA).
    static func childPublicKey(_ keyshare: Keyshare, path: String) throws -> [UInt8] {
        [UInt8](try keyshare.childPublicKey(path: path))
    }

    /// Verifies with libsecp256k1 (and recovers the key from r, s, v) or libsodium under `key`.
    static func verifies(_ signature: Signature, message: Data, key publicKey: [UInt8], algorithm: Keyshare.Algorithm) -> Bool {
        signature.algorithm == algorithm && signature.isValid(for: message, publicKey: Data(publicKey))
    }
}
