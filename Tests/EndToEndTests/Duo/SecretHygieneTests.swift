import CloudNode
import Foundation
import MPCCrypto
@testable import MPCProtocols
@testable import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Issue 10's rule "no secret in any log line, error description or metric": a full duo run per
/// algorithm (keygen, sign, refresh, sign, export — plus failures: a wrong token, a tampered export
/// answer, a wrong cloud key) with every node log line, the metrics text, every error description and
/// the descriptions/reflections of every secret-holding value captured; then every secret of the run
/// — both parties' share scalars of every generation, the exported key, the node's master key and node
/// key seed — is searched for in hex (either case) and base64 in all of it.
@Suite("Secret hygiene: logs, errors, metrics and descriptions never show a secret", .heavy, .timeLimit(.minutes(30)))
struct SecretHygieneTests {
    struct Tokens: TokenVerifier {
        var name: String { "hygiene" }
        func verify(token: String?) async throws(AuthenticationError) -> Principal {
            switch token {
            case "backend"?: return Principal(subject: "app", scopes: ["export"])  // the backend acts for the key owner (session.md §9.2)
            case "app"?: return Principal(subject: "app")
            case nil: throw .missingToken
            default: throw .invalidToken
            }
        }
    }

    @Test func aFullRunLeaksNoSecret() async throws {
        let lines = LockedValue<[String]>([])
        let nodeKey = Ed25519.SigningKey(), masterKeyBytes = SecureRandom.bytes(count: 32)
        let directory = NSTemporaryDirectory() + "silentshard-hygiene-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: NodeMasterKey(bytes: masterKeyBytes))
        let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow())
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: nodeKey, verifier: Tokens(), stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
            postHandler: NodePostHandler(runner: runner), logger: NodeLogger { line in lines.withLock { $0.append(line) } }))
        let port = try server.start()
        let cloudKey = Hex.encode(nodeKey.verifyingKey.bytes)

        var texts: [String] = []
        var secrets: [[UInt8]] = [masterKeyBytes, nodeKey.seed]
        func capture(_ value: Any) {
            texts.append(String(describing: value))
            texts.append(String(reflecting: value))
            var dumped = ""
            dump(value, to: &dumped)
            texts.append(dumped)
        }
        func record(_ error: any Error) { capture(error) }
        func shareSecrets(_ keyshare: Keyshare) throws -> [[UInt8]] {
            switch keyshare.algorithm {
            case .ecdsa:
                let share = try keyshare.dklsKeyshare()
                return [share.share.bytes, share.vrfShare.bytes]
            case .eddsa:
                return [try keyshare.frostKeyshare().secretShare.bytes]
            }
        }
        func nodeSecrets(_ keyId: String, _ algorithm: Keyshare.Algorithm) throws -> [[UInt8]] {
            let stored = try #require(try store.share(keyId: keyId))
            let keyshare = try Keyshare(algorithm: algorithm, mode: .duo,
                                        protocolBytes: try NodeShareBlob(bytes: stored.bytes).protocolBytes)
            return try shareSecrets(keyshare)
        }

        for algorithm in [Keyshare.Algorithm.ecdsa, .eddsa] {
            func session(token: String, key: String = cloudKey) -> DuoSession {
                let config = WebsocketConfig(url: "ws://127.0.0.1:\(port)", authenticationToken: token)
                return algorithm == .ecdsa
                    ? SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: key,
                                                     websocketConfig: config, storageClient: InMemoryStorageClient())
                    : SilentShard.EdDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: key,
                                                     websocketConfig: config, storageClient: InMemoryStorageClient())
            }
            let app = session(token: "app")
            let message = algorithm == .ecdsa ? Data(SHA256.hash(Array("hygiene".utf8))) : Data("hygiene".utf8)
            let keyshare = try await app.keygen()
            secrets += try shareSecrets(keyshare) + nodeSecrets(keyshare.keyId, algorithm)
            capture(keyshare)
            capture(try await app.signature(keyshare: keyshare, message: message))
            let refreshed = try await app.keyRefresh(keyshare: keyshare)
            secrets += try shareSecrets(refreshed) + nodeSecrets(refreshed.keyId, algorithm)
            capture(refreshed)
            capture(try await app.signature(keyshare: refreshed, message: message, chainPath: "m/3"))

            // Export through the backend, then a tampered answer.
            let request = try await app.exportRequest(keyshare: refreshed)
            capture(request)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)\(request.path)?params=\(request.params)"))
            let response = try await WebSocketTransport.post(url: url, body: request.body, bearerToken: "backend",
                                                             settings: WebSocketSettings(WebsocketConfig(url: "ws://127.0.0.1")))
            var tampered = [UInt8](response)
            tampered[tampered.count - 70] ^= 1
            do { _ = try app.exportCombine(request: try await app.exportRequest(keyshare: refreshed), response: Data(tampered)) }
            catch { record(error) }
            let exported = try app.exportCombine(request: request, response: response)
            capture(exported)
            secrets.append([UInt8](exported.privateKey))

            // Failures: a wrong token, a wrong cloud key, a stale share.
            do { _ = try await session(token: "nobody").keygen() } catch { record(error) }
            do { _ = try await session(token: "app", key: Hex.encode(Ed25519.SigningKey().verifyingKey.bytes)).keygen() }
            catch { record(error) }
            do { _ = try await app.signature(keyshare: keyshare, message: message) } catch { record(error) }
        }
        texts += lines.withLock { $0 }
        texts.append(server.metricsText())
        await server.stop()

        let haystack = texts.joined(separator: "\n")
        let lowercased = haystack.lowercased()
        #expect(secrets.count >= 12)
        for secret in secrets {
            // Booleans first, so a failure report does not print the haystack (and the secret).
            let inHex = lowercased.contains(Hex.encode(secret))
            let inReversedHex = lowercased.contains(Hex.encode(secret.reversed()))
            let inBase64 = haystack.contains(Data(secret).base64EncodedString())
            #expect(!inHex, "a secret appears in hex")
            #expect(!inReversedHex, "a secret appears in reversed hex")
            #expect(!inBase64, "a secret appears in base64")
        }
        // The test would notice: the haystack is not empty and holds public values.
        #expect(lines.withLock { $0.count } > 0)
        #expect(haystack.count > 1_000)
    }
}
