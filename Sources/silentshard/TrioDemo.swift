import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import trio

/// The trio demo over the network: embedded nodes A and B (each its own libwebsockets server on a
/// loopback port, node key, certificate from a demo cluster key, temporary SQLite store), A linked to
/// B's `/v3/peer`, and the SDK's `TrioSession` driving A through the WebSocket client.
enum TrioDemo {
    /// A `TrioNetworkClient` subclass counting the bytes the app sends.
    final class CountingClient: TrioNetworkClient, @unchecked Sendable {
        private let counter = LockedValue(0)
        var bytesSent: Int { counter.withLock { $0 } }
        func reset() { counter.withLock { $0 = 0 } }

        override func send(bytes: Data) async throws {
            counter.withLock { $0 += bytes.count }
            try await super.send(bytes: bytes)
        }
    }

    /// Runs keygen, sign with A, sign with B, refresh and sign again for both algorithms; with
    /// `options.chainsFile`, also appends `ChainsDemo`'s trio entries (signed through node A) to `chains`.
    static func rows(_ options: NetworkedDemo.Options, chains: inout [JSONValue]) async throws -> [NetworkedDemo.Row] {
        let clusterKey = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
        let directory = NSTemporaryDirectory() + "silentshard-trio-demo-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func node(_ role: NodeCertificate.Role, peer: (any TrioPeerConnector)?) throws -> NodeServer {
            let key = Ed25519.SigningKey()
            let now = UInt64(Date().timeIntervalSince1970)
            let certificate = NodeCertificate(role: role, groupID: group, nodeKey: key.verifyingKey, notBefore: now - 60,
                                              notAfter: now + 86_400, serial: 1, issuer: clusterKey)
            let identity = try TrioNodeIdentity(nodeKey: key, certificate: certificate, clusterKey: clusterKey.verifyingKey)
            let store = try NodeShareStore(path: directory + "/node-\(role.rawValue).sqlite", masterKey: .random())
            let runner = NodeStepRunner(identity: identity, store: store, peer: peer, replayWindow: try ReplayWindow(),
                                        tokenVerifier: TrioDemoVerifier())
            var config = NodeServerConfiguration(nodeKey: key, verifier: TrioDemoVerifier(),
                                                 stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
                                                 logger: .silent)
            config.trio = (certificate, clusterKey.verifyingKey)
            config.postHandler = NodePostHandler(runner: runner)
            if role == .trioB { config.peerListener = PeerListener() }   // A's links: B's own loopback listener
            return NodeServer(configuration: config)
        }
        let serverB = try node(.trioB, peer: nil)
        let portB = try serverB.start()
        guard let peerPortB = serverB.peerPort else { throw NodeServerError.startFailed(reason: "node B has no peer listener") }
        let serverA = try node(.trioA, peer: WebSocketPeerConnector(baseURL: "ws://127.0.0.1:\(peerPortB)"))
        let portA: Int
        do { portA = try serverA.start() } catch {
            await serverB.stop()
            throw error
        }
        if !options.json {
            print("\n== trio over WebSocket: embedded node A on ws://127.0.0.1:\(portA) relaying to node B (apps' port \(portB), links on port \(peerPortB))")
        }
        var rows: [NetworkedDemo.Row] = []
        do {
            for algorithm in [Keyshare.Algorithm.ecdsa, .eddsa] {
                rows += try await run(algorithm: algorithm, port: portA, cloudKey: Hex.encode(clusterKey.verifyingKey.bytes),
                                      options: options)
            }
            if options.chainsFile != nil {
                chains += try await ChainsDemo.entries(chainsParty(port: portA, cloudKey: Hex.encode(clusterKey.verifyingKey.bytes),
                                                                   options: options))
            }
        } catch {
            await serverA.stop()
            await serverB.stop()
            throw error
        }
        await serverA.stop()
        await serverB.stop()
        return rows
    }

    /// `ChainsDemo`'s trio party: a `TrioSession` per algorithm against node A on `port`.
    static func chainsParty(port: Int, cloudKey: String, options: NetworkedDemo.Options) -> ChainsDemo.Party {
        let client = TrioNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)"))
        let signer = SoftwareEd25519MessageSigner()
        let sessions = [Keyshare.Algorithm.ecdsa, .eddsa].map { algorithm in
            let session = algorithm == .ecdsa
                ? SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                  storageClient: InMemoryStorageClient())
                : SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                  storageClient: InMemoryStorageClient())
            session.logger = options.log ? SilentShardLoggers.standardError : SilentShardLoggers.none
            return session
        }
        func session(_ algorithm: Keyshare.Algorithm) -> TrioSession { algorithm == .ecdsa ? sessions[0] : sessions[1] }
        return ChainsDemo.Party(mode: "trio", keygen: { try await session($0).keygen() }, sign: { keyshare, message, path in
            try await session(keyshare.algorithm).signature(keyshare: keyshare, message: message, chainPath: path)
        })
    }

    static func run(algorithm: Keyshare.Algorithm, port: Int, cloudKey: String,
                    options: NetworkedDemo.Options) async throws -> [NetworkedDemo.Row] {
        let client = CountingClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)"))
        let storage = InMemoryStorageClient()
        let signer = SoftwareEd25519MessageSigner()
        let name = algorithm == .ecdsa ? "ECDSA" : "EdDSA"
        func makeSession(_ storage: any StorageClient) -> TrioSession {
            let session = algorithm == .ecdsa
                ? SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                  storageClient: storage)
                : SilentShard.EdDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                  storageClient: storage)
            session.logger = options.log ? SilentShardLoggers.standardError : SilentShardLoggers.none
            return session
        }
        let session = makeSession(storage)
        let text = Data("Hello from SilentShard".utf8)
        let message = options.message ?? (algorithm == .ecdsa ? Data(SHA256.hash(Array(text))) : text)
        var rows: [NetworkedDemo.Row] = []

        func timed<T>(_ operation: String, _ body: () async throws -> T, verify: (T) -> Bool,
                      fields: (T) throws -> [String: JSONValue] = { _ in [:] }) async throws -> T {
            client.reset()
            let start = ContinuousClock.now
            let value = try await body()
            let elapsed = ContinuousClock.now - start
            let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            rows.append(NetworkedDemo.Row(mode: "trio", algorithm: name, operation: operation, milliseconds: milliseconds,
                                          bytesSent: client.bytesSent, verified: verify(value), fields: try fields(value)))
            return value
        }
        func keyFields(_ key: Keyshare) -> [String: JSONValue] {
            ["publicKey": .string(Hex.encode(Array(key.publicKey))), "chainCode": .string(Hex.encode(Array(key.rootChainCode)))]
        }

        let keyshare = try await timed("keygen", { try await session.keygen() }, verify: { $0.partyCount == 3 }, fields: keyFields)
        if !options.json { print("\(name) trio public key \(Hex.encode(Array(keyshare.publicKey)))") }
        let child = try NetworkedDemo.childPublicKey(keyshare, path: options.path)
        func signatureFields(_ signature: Signature) -> [String: JSONValue] {
            var fields = keyFields(keyshare)
            fields["path"] = .string(options.path)
            fields["childPublicKey"] = .string(Hex.encode(child))
            fields["message"] = .string(Hex.encode(Array(message)))
            fields["signature"] = .string(Hex.encode(Array(signature.rawRepresentation)))
            if let recoveryId = signature.recoveryId { fields["recoveryId"] = .number(Double(recoveryId)) }
            return fields
        }
        let verify = { (signature: Signature) in NetworkedDemo.verifies(signature, message: message, key: child, algorithm: algorithm) }
        _ = try await timed("sign", {
            try await session.signature(keyshare: keyshare, message: message, chainPath: options.path, signer: .nodeA)
        }, verify: verify, fields: signatureFields)
        _ = try await timed("signWithB", {
            try await session.signature(keyshare: keyshare, message: message, chainPath: options.path, signer: .nodeB)
        }, verify: verify, fields: signatureFields)
        let refreshed = try await timed("refresh", { try await session.keyRefresh(keyshare: keyshare) },
                                        verify: { $0.publicKey == keyshare.publicKey && $0.generation != keyshare.generation },
                                        fields: keyFields)
        _ = try await timed("signAfterRefresh", {
            try await session.signature(keyshare: refreshed, message: message, chainPath: options.path)
        }, verify: verify, fields: signatureFields)
        var current = refreshed
        // Presign with A (stored at A), then finish over one HTTP POST.
        _ = try await timed("preSignFinal", {
            let presignature = try await session.preSignature(keyshare: refreshed, chainPath: options.path)
            return try await session.preSignatureFinal(preSignature: presignature, message: message)
        }, verify: verify, fields: signatureFields)
        do {
            // The app loses its share (fresh storage, same device key): A and B re-share it (EdDSA: repair
            // + refresh), then sign.
            let recovering = makeSession(InMemoryStorageClient())
            var recovered: Keyshare?
            _ = try await timed("signAfterRecover", {
                let share = try await recovering.recovery(keysharePublicKey: keyshare.publicKey)
                recovered = share
                return try await recovering.signature(keyshare: share, message: message, chainPath: options.path)
            }, verify: verify, fields: signatureFields)
            if let recovered { current = recovered }
        }
        let exporter = current.generation == refreshed.generation ? session : makeSession(InMemoryStorageClient())
        let exported = try await timed("export", { try await exporter.export(keyshare: current) },
                                       verify: { NetworkedDemo.matches($0) && $0.publicKey == keyshare.publicKey },
                                       fields: { key in
            ["privateKey": .string(Hex.encode([UInt8](key.privateKey))), "publicKey": .string(Hex.encode([UInt8](key.publicKey))),
             "chainCode": .string(Hex.encode([UInt8](key.chainCode)))]
        })
        if !options.json { print("\(name) trio exported key matches the public key: \(NetworkedDemo.matches(exported))") }
        if algorithm == .ecdsa {
            // A hard child (threshold derivation, dkls23.md §15: a new key of its own), then a signature with it.
            // The hard child is a key of its own; --path then applies under it (soft), so the run's path is
            // the hard path followed by the caller's.
            let hardPath = "m/44'/60'/0'"
            var signingKey: [UInt8] = []
            _ = try await timed("signHardDerived", {
                let childShare = try await exporter.hardDerivation(keyshare: current, path: hardPath)
                signingKey = try NetworkedDemo.childPublicKey(childShare, path: options.path)
                return try await exporter.signature(keyshare: childShare, message: message, chainPath: options.path)
            }, verify: { NetworkedDemo.verifies($0, message: message, key: signingKey, algorithm: .ecdsa) && signingKey != child },
               fields: { signature in
                var fields = signatureFields(signature)
                fields["path"] = .string(hardPath + options.path.dropFirst())
                fields["childPublicKey"] = .string(Hex.encode(signingKey))
                return fields
            })
        }
        return rows
    }
}

/// The embedded trio nodes' tokens: the app runs without a token (development, like `--auth none`)
/// and, for the demo's export row, gets every operation's scope including `export` (which trio
/// export needs explicitly, session.md §9.3).
struct TrioDemoVerifier: TokenVerifier {
    var name: String { "none (demo, every scope)" }
    var acceptsMissingToken: Bool { true }
    func verify(token: String?) async throws(AuthenticationError) -> Principal {
        Principal(subject: "demo", scopes: Set(SessionOperation.allCases.map(\.name)))
    }
}
