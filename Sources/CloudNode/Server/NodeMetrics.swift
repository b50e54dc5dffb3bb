import MPCCrypto

/// Counters for `GET /metrics` (Prometheus text format). Labels are route names only: no tokens,
/// principals or addresses.
final class NodeMetrics: Sendable {
    private struct Counters {
        var connectionsOpen = 0
        var connectionsTotal = 0
        var messagesIn = 0
        var messagesOut = 0
        var bytesIn = 0
        var bytesOut = 0
        var rejectedUpgrades = 0
        var authFailures = 0
        var httpRequests = 0
        var steps: [String: Int] = [:]
    }

    private let counters = LockedValue(Counters())

    func connectionOpened() { counters.withLock { $0.connectionsOpen += 1; $0.connectionsTotal += 1 } }
    func connectionClosed() { counters.withLock { $0.connectionsOpen -= 1 } }
    func received(bytes: Int) { counters.withLock { $0.messagesIn += 1; $0.bytesIn += bytes } }
    func sent(bytes: Int) { counters.withLock { $0.messagesOut += 1; $0.bytesOut += bytes } }
    func upgradeRejected() { counters.withLock { $0.rejectedUpgrades += 1 } }
    func authenticationFailed() { counters.withLock { $0.authFailures += 1 } }
    func httpRequest() { counters.withLock { $0.httpRequests += 1 } }
    func stepStarted(_ route: NodeRoute) { counters.withLock { $0.steps[route.description, default: 0] += 1 } }

    /// Open WebSocket connections.
    var openConnections: Int { counters.withLock { $0.connectionsOpen } }

    /// The Prometheus exposition.
    func render() -> String {
        let c = counters.withLock { $0 }
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        metric("silentshard_node_connections_open", "gauge", "Open WebSocket connections.", c.connectionsOpen)
        metric("silentshard_node_connections_total", "counter", "WebSocket connections accepted.", c.connectionsTotal)
        metric("silentshard_node_messages_received_total", "counter", "WebSocket messages received.", c.messagesIn)
        metric("silentshard_node_messages_sent_total", "counter", "WebSocket messages sent.", c.messagesOut)
        metric("silentshard_node_bytes_received_total", "counter", "WebSocket payload bytes received.", c.bytesIn)
        metric("silentshard_node_bytes_sent_total", "counter", "WebSocket payload bytes sent.", c.bytesOut)
        metric("silentshard_node_rejected_upgrades_total", "counter", "WebSocket upgrades rejected.", c.rejectedUpgrades)
        metric("silentshard_node_auth_failures_total", "counter", "Connections or requests refused by the token verifier.",
               c.authFailures)
        metric("silentshard_node_http_requests_total", "counter", "HTTP requests served.", c.httpRequests)
        out += "# HELP silentshard_node_steps_total Authenticated steps started, by route.\n"
        out += "# TYPE silentshard_node_steps_total counter\n"
        for (route, count) in c.steps.sorted(by: { $0.key < $1.key }) {
            out += "silentshard_node_steps_total{route=\"\(route)\"} \(count)\n"
        }
        return out
    }
}
