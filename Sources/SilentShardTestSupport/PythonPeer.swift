import ChildProcesses
import MPCCrypto
import Foundation

/// The independent peer of the transport tests: `interop/ws_peer.py` (Python `websockets`), one
/// process per test process, started on first use. It exits when this process does (its standard
/// input is a pipe we never close).
public struct PythonPeer: Sendable {
    public var wsPort: Int
    public var wssPort: Int
    public var httpPort: Int
    public var httpsPort: Int
    /// A hand-written WebSocket server for malformed behaviour (see interop/ws_peer.py).
    public var rawPort: Int
    /// wss with a certificate from the test CA for `other.invalid`.
    public var wssWrongHostPort: Int
    /// The test CA that signed the peer's certificate (DER).
    public var caCertificate: Data
    /// A CA that did not sign it (DER).
    public var otherCACertificate: Data

    public var ws: String { "ws://127.0.0.1:\(wsPort)" }
    public var wss: String { "wss://localhost:\(wssPort)" }
    public var http: String { "http://127.0.0.1:\(httpPort)" }
    public var https: String { "https://localhost:\(httpsPort)" }
    public var raw: String { "ws://127.0.0.1:\(rawPort)" }

    /// The shared peer.
    public static func shared() async throws -> PythonPeer {
        try await launch.value
    }

    private static let launch = Task { try start() }

    private struct Ports: Decodable {
        var ws: Int, wss: Int, http: Int, https: Int, raw: Int, wss_wrong_host: Int
        var ca_der: String, other_ca_der: String
    }

    /// The repository root (from this file's path).
    public static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private static func start() throws -> PythonPeer {
        let root = repositoryRoot
        let stdin = Pipe()
        let stdout = Pipe()
        // The peer's log (tracebacks of connections the tests drop on purpose) is noise; set
        // SILENTSHARD_PEER_LOG=1 to see it.
        let log: ChildProcess.Stream = ProcessInfo.processInfo.environment["SILENTSHARD_PEER_LOG"] == nil ? .null : .inherit
        let process = try ChildProcess.run(root.appendingPathComponent(".venv/bin/python"),
                                           arguments: [root.appendingPathComponent("interop/ws_peer.py").path],
                                           standardInput: .pipe(stdin), standardOutput: .pipe(stdout), standardError: log)
        keepAlive.withLock { $0 = [stdin, process] }
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw PeerError.didNotStart }
            line.append(chunk)
        }
        let ports = try JSONDecoder().decode(Ports.self, from: line)
        return PythonPeer(
            wsPort: ports.ws, wssPort: ports.wss, httpPort: ports.http, httpsPort: ports.https, rawPort: ports.raw, wssWrongHostPort: ports.wss_wrong_host,
            caCertificate: try Data(contentsOf: URL(fileURLWithPath: ports.ca_der)),
            otherCACertificate: try Data(contentsOf: URL(fileURLWithPath: ports.other_ca_der))
        )
    }

    private static let keepAlive = LockedValue<[Any]>([])

    enum PeerError: Error { case didNotStart }
}

