import ChildProcesses
import CloudNode
import Foundation
import duo
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects the server's log lines (tests assert on kinds of lines, and that no secret appears).
final class LogCollector: Sendable {
    private let lines = LockedValue<[String]>([])
    var logger: NodeLogger { NodeLogger { [self] line in lines.withLock { $0.append(line) } } }
    var all: [String] { lines.withLock { $0 } }
    func contains(_ text: String) -> Bool { all.contains { $0.contains(text) } }
}

/// A throwaway CA and a server certificate for `localhost` / 127.0.0.1 (made once per test process with `openssl`).
struct TestCertificates: Sendable {
    var certificatePath: String
    var keyPath: String
    var caDER: Data

    static let shared: Result<TestCertificates, any Error> = Result { try make() }

    private static func make() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("silentshard-node-tls-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let d = directory.path
        try """
            basicConstraints=CA:FALSE
            subjectAltName=DNS:localhost,IP:127.0.0.1
            extendedKeyUsage=serverAuth
            """.write(toFile: "\(d)/ext.cnf", atomically: true, encoding: .utf8)
        let script = """
            set -e
            cd '\(d)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 2 \
              -subj /CN=silentshard-node-test-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr -subj /CN=localhost 2>/dev/null
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext.cnf 2>/dev/null
            openssl x509 -in ca.pem -outform DER -out ca.der
            """
        let process = try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script])
        guard process.waitForExit(), process.terminationStatus == 0 else { throw NodeServerError.startFailed(reason: "openssl failed") }
        return TestCertificates(certificatePath: "\(d)/server.pem", keyPath: "\(d)/server.key",
                                caDER: try Data(contentsOf: URL(fileURLWithPath: "\(d)/ca.der")))
    }
}

/// An embedded node on 127.0.0.1, port 0, with the echo handlers.
struct TestNode {
    var server: NodeServer
    var log: LogCollector
    var secure: Bool
    var caDER: Data?

    var port: Int { server.port }
    var wsURL: String { secure ? "wss://localhost:\(port)" : "ws://127.0.0.1:\(port)" }
    var httpURL: String { secure ? "https://localhost:\(port)" : "http://127.0.0.1:\(port)" }

    static func start(
        verifier: any TokenVerifier = NoTokenVerifier(), secure: Bool = false, maximumMessageSize: Int = 16 << 20,
        maximumPostBodySize: Int = 1 << 20, maximumConnections: Int = 1024, tokenTimeout: Duration = .seconds(5),
        idleTimeout: Duration = .seconds(30), stepHandler: any StepHandler = EchoStepHandler(),
        rateLimiter: NodeRateLimiter? = nil, postHandler: any PostHandler = EchoPostHandler()
    ) throws -> TestNode {
        let log = LogCollector()
        var certificate: TestCertificates?
        if secure { certificate = try TestCertificates.shared.get() }
        let config = NodeServerConfiguration(
            tlsCertificatePath: certificate?.certificatePath, tlsKeyPath: certificate?.keyPath,
            nodeKey: Ed25519.SigningKey(), verifier: verifier, maximumMessageSize: maximumMessageSize,
            maximumPostBodySize: maximumPostBodySize, maximumConnections: maximumConnections,
            tokenTimeout: tokenTimeout, idleTimeout: idleTimeout,
            stepHandlers: StepHandlerRegistry(fallback: stepHandler), postHandler: postHandler, logger: log.logger,
            rateLimiter: rateLimiter)
        let server = NodeServer(configuration: config)
        try server.start()
        return TestNode(server: server, log: log, secure: secure, caDER: certificate?.caDER)
    }

    func clientConfig(token: String? = nil, readTimeout: Duration = .seconds(600), maximumMessageSize: Int = 16 << 20)
        -> WebsocketConfig {
        WebsocketConfig(url: wsURL, authenticationToken: token, connectTimeout: .seconds(300), readTimeout: readTimeout,
                        maximumMessageSize: maximumMessageSize, trustedRootCertificates: caDER.map { [$0] } ?? [])
    }

    /// A plain-HTTP GET (status, body).
    func get(_ path: String) async throws -> (Int, Data) {
        guard let url = URL(string: "http://127.0.0.1:\(port)\(path)") else { throw NodeServerError.invalidListenAddress(path) }
        let (data, response) = try await URLSession.shared.data(from: url)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

/// `count` duo clients on the echo route, each connected and past one echo (they hold a connection each).
func openEchoClients(_ node: TestNode, count: Int) async throws -> [DuoNetworkClient] {
    var open: [DuoNetworkClient] = []
    for _ in 0..<count {
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1]))
        _ = try await client.read()
        open.append(client)
    }
    return open
}

/// Connects `client` once the node accepts it again (a closed connection is freed on the service
/// thread a moment later); false after 4 s of refusals.
func connectOnceAccepted(_ client: DuoNetworkClient) async throws -> Bool {
    for _ in 0..<200 {
        if (try? await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)) != nil { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return false
}

/// Runs `body` and returns the error it threw (nil if none).
func thrownError(_ body: () async throws -> Void) async -> (any Error)? {
    do {
        try await body()
        return nil
    } catch {
        return error
    }
}

/// The close code of a `NetworkError.closedByPeer`, if that is what `error` is.
func closeCode(_ error: (any Error)?) -> Int? {
    if case .closedByPeer(let code, _) = error as? NetworkError { return code }
    return nil
}

/// Runs blocking work (waiting for a child process, reading its pipe) on a thread of its own, so
/// it never occupies one of the cooperative pool's few threads the embedded server's tasks need.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}
