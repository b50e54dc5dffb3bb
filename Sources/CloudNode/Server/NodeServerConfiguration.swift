import Foundation
import MPCCrypto
import SessionEngine

/// Everything a ``NodeServer`` needs. Secrets (the node key, verifier secrets) are never printed.
package struct NodeServerConfiguration: Sendable {
    /// Listen address: an IPv4 literal, an IPv6 literal, or `localhost` (IPv4 loopback).
    package var host: String
    /// Listen port; 0 picks a free one (``NodeServer/port`` tells which).
    package var port: Int
    /// PEM certificate chain and key for wss/https; both nil: plain ws/http.
    package var tlsCertificatePath: String?
    package var tlsKeyPath: String?
    /// The node's Ed25519 session key (its verifying key is served at `GET /v3/verifying-key`).
    package var nodeKey: Ed25519.SigningKey
    /// Checks the first text message (and POSTs' bearer token).
    package var verifier: any TokenVerifier
    /// Largest WebSocket message in either direction; larger incoming closes with 1009.
    package var maximumMessageSize: Int
    /// Largest POST body (413 beyond).
    package var maximumPostBodySize: Int
    /// Concurrent WebSocket connections; upgrades beyond are refused with 503.
    package var maximumConnections: Int
    /// Time for the first message (token) to arrive (session.md Appendix A: 5 s).
    package var tokenTimeout: Duration
    /// Time a step may wait for the peer's next message (Appendix A: 30 s per frame).
    package var idleTimeout: Duration
    /// Time a whole step may take (Appendix A: 120 s share operations).
    package var stepTimeout: Duration
    /// Served routes.
    package var routes: NodeRouteTable
    /// Step handlers.
    package var stepHandlers: StepHandlerRegistry
    /// POST handler.
    package var postHandler: any PostHandler
    package var logger: NodeLogger
    /// session.md §9.5 limits, shared with the step runners (give them the same object). nil: no limits (tests,
    /// the embedded demo); `silentshard node` always sets one (`--rate-limits`).
    package var rateLimiter: NodeRateLimiter?
    /// Trio: this node's certificate and the cluster key, shown at `GET /v3/verifying-key`
    /// (session.md §2.2: `verifying_key` is then the cluster key, `node_key` the node's own).
    package var trio: (certificate: NodeCertificate, clusterKey: Ed25519.VerifyingKey)?
    /// Trio node B: where it serves the inter-node link `/v3/peer`, apart from the apps' listener
    /// (security review finding 5). nil: no link is served (duo nodes, node A).
    package var peerListener: PeerListener?

    package init(
        host: String = "127.0.0.1", port: Int = 0, tlsCertificatePath: String? = nil, tlsKeyPath: String? = nil,
        nodeKey: Ed25519.SigningKey, verifier: any TokenVerifier,
        maximumMessageSize: Int = 1 << 20, maximumPostBodySize: Int = 1 << 20, maximumConnections: Int = 1024,
        tokenTimeout: Duration = .seconds(5), idleTimeout: Duration = .seconds(30), stepTimeout: Duration = .seconds(120),
        routes: NodeRouteTable = .standard, stepHandlers: StepHandlerRegistry = StepHandlerRegistry(),
        postHandler: any PostHandler = UnservedPostHandler(), logger: NodeLogger = .standardError,
        rateLimiter: NodeRateLimiter? = nil
    ) {
        self.host = host
        self.port = port
        self.tlsCertificatePath = tlsCertificatePath
        self.tlsKeyPath = tlsKeyPath
        self.nodeKey = nodeKey
        self.verifier = verifier
        self.maximumMessageSize = maximumMessageSize
        self.maximumPostBodySize = maximumPostBodySize
        self.maximumConnections = maximumConnections
        self.tokenTimeout = tokenTimeout
        self.idleTimeout = idleTimeout
        self.stepTimeout = stepTimeout
        self.routes = routes
        self.stepHandlers = stepHandlers
        self.postHandler = postHandler
        self.logger = logger
        self.rateLimiter = rateLimiter
    }
}

/// Node B's listener for node A's links (`/v3/peer` only; session.md §2.3). Keep it on a private
/// address: only A's processes need it. Same TLS files as the apps' listener.
package struct PeerListener: Sendable, Equatable {
    /// Listen address (IPv4 or IPv6 literal, or `localhost`).
    package var host: String
    /// Listen port; 0 picks a free one (``NodeServer/peerPort`` tells which).
    package var port: Int
    /// Concurrent links; upgrades beyond are refused with 503.
    package var maximumConnections: Int

    package init(host: String = "127.0.0.1", port: Int = 0, maximumConnections: Int = 1024) {
        self.host = host
        self.port = port
        self.maximumConnections = maximumConnections
    }
}
