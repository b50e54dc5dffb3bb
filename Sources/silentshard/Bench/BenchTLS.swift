import ChildProcesses
import Foundation
import SilentShardCore

/// `silentshard bench --tls`: a throwaway CA and a server certificate for 127.0.0.1 / localhost (P-256, two days),
/// made with the `openssl` command in the bench's temporary directory. The node processes serve wss/https
/// with it, and the bench's app trusts exactly that CA (`WebsocketConfig.trustedRootCertificates`).
struct BenchTLS: Sendable {
    let certificatePath: String
    let keyPath: String
    /// The CA certificate, DER: the app's only trusted root.
    let caDER: Data

    /// The node's `--tls-cert` / `--tls-key` arguments.
    var nodeArguments: [String] { ["--tls-cert", certificatePath, "--tls-key", keyPath] }

    static func make(directory: String) throws -> BenchTLS {
        try """
            basicConstraints=CA:FALSE
            subjectAltName=DNS:localhost,IP:127.0.0.1
            extendedKeyUsage=serverAuth
            """.write(toFile: directory + "/tls-ext.cnf", atomically: true, encoding: .utf8)
        let script = """
            set -e
            cd '\(directory)'
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls-ca.key -out tls-ca.pem -days 2 \
              -subj /CN=silentshard-bench-ca -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls-server.key -out tls-server.csr \
              -subj /CN=localhost 2>/dev/null
            openssl x509 -req -in tls-server.csr -CA tls-ca.pem -CAkey tls-ca.key -CAcreateserial -out tls-server.pem -days 2 \
              -extfile tls-ext.cnf 2>/dev/null
            openssl x509 -in tls-ca.pem -outform DER -out tls-ca.der
            """
        let process = try ChildProcess.run(URL(fileURLWithPath: "/bin/sh"), arguments: ["-c", script])
        guard process.waitForExit(), process.terminationStatus == 0 else {
            throw BenchError("--tls: making a self-signed certificate with the openssl command failed (is openssl installed?)")
        }
        return BenchTLS(certificatePath: directory + "/tls-server.pem", keyPath: directory + "/tls-server.key",
                        caDER: try Data(contentsOf: URL(fileURLWithPath: directory + "/tls-ca.der")))
    }

    /// The WebSocket URL of a node at `port` on loopback: wss with `tls`, ws without.
    static func websocketURL(port: Int, tls: BenchTLS?) -> String {
        (tls == nil ? "ws" : "wss") + "://127.0.0.1:\(port)"
    }

    /// The HTTP base URL (POSTs) of a node at `port` on loopback.
    static func httpURL(port: Int, tls: BenchTLS?) -> String {
        (tls == nil ? "http" : "https") + "://127.0.0.1:\(port)"
    }

    /// The app's WebSocket configuration for a node at `port`: with `tls`, wss trusting only the bench CA.
    static func config(port: Int, tls: BenchTLS?, token: String?) -> WebsocketConfig {
        WebsocketConfig(url: websocketURL(port: port, tls: tls), authenticationToken: token,
                        trustedRootCertificates: tls.map { [$0.caDER] } ?? [])
    }
}
