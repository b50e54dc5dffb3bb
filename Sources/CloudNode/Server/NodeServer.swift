import Foundation
import MPCCrypto
import SilentShardCore

/// The cloud node's server: HTTP and WebSocket on one port (libwebsockets, one service thread),
/// authenticating each step's token before its handler runs. Embeddable: `start()` returns the
/// bound port (use port 0 in tests and demos), `stop()` closes everything gracefully.
package final class NodeServer: Sendable {
    package let configuration: NodeServerConfiguration
    private let metrics = NodeMetrics()
    /// The apps' listener, then node B's peer listener if configured.
    private let engines: LockedValue<[LWSEngine]> = LockedValue([])
    private let boundPort = LockedValue(0)
    private let sessions = LockedValue<(next: Int, tasks: [Int: Task<Void, Never>])>((0, [:]))

    package init(configuration: NodeServerConfiguration) {
        self.configuration = configuration
    }

    /// The node's Ed25519 verifying key (hex), as served at `GET /v3/verifying-key`.
    package var verifyingKeyHex: String { Hex.encode(configuration.nodeKey.verifyingKey.bytes) }

    /// The listening port (0 before `start`).
    package var port: Int { boundPort.withLock { $0 } }

    /// The peer listener's port (node B, ``NodeServerConfiguration/peerListener``); nil when there is none
    /// or before `start`.
    package var peerPort: Int? { engines.withLock { $0.count == 2 ? $0[1].port : nil } }

    /// Binds and starts serving; returns the bound port (and binds the peer listener, if configured).
    @discardableResult
    package func start() throws(NodeServerError) -> Int {
        let config = configuration
        guard config.maximumMessageSize > 0, config.maximumPostBodySize > 0, config.maximumConnections > 0,
              (config.peerListener?.maximumConnections ?? 1) > 0 else {
            throw .invalidConfiguration("limits must be positive")
        }
        guard (config.tlsCertificatePath == nil) == (config.tlsKeyPath == nil) else {
            throw .invalidConfiguration("--tls-cert and --tls-key go together")
        }
        // The apps' listener never serves /v3/peer (security review finding 5); the peer listener
        // serves nothing else.
        var settings = LWSEngine.Settings(
            host: config.host, port: config.port, tlsCertificatePath: config.tlsCertificatePath, tlsKeyPath: config.tlsKeyPath,
            maximumMessageSize: config.maximumMessageSize, maximumPostBodySize: config.maximumPostBodySize,
            maximumConnections: config.maximumConnections, idleTimeout: config.idleTimeout,
            routes: config.routes.withoutPeerLink, rateLimiter: config.rateLimiter)
        settings.acceptsMissingToken = config.verifier.acceptsMissingToken
        let delegate = LWSEngine.Delegate(
            connectionOpened: { [weak self] connection in self?.spawnSession(connection) },
            post: { [weak self] route, params, token, body, address, reply in
                guard let self else { return reply(.text(status: 503, "stopping\n")) }
                Task { reply(await self.servePost(route: route, params: params, token: token, body: body, clientAddress: address)) }
            },
            get: { [weak self] path in self?.serveGet(path) })
        var created = [LWSEngine(settings: settings, delegate: delegate, metrics: metrics, logger: config.logger)]
        if let peer = config.peerListener {
            var peerSettings = settings
            peerSettings.host = peer.host
            peerSettings.port = peer.port
            peerSettings.maximumConnections = peer.maximumConnections
            peerSettings.routes = .peerLinkOnly
            peerSettings.acceptsMissingToken = false
            let peerDelegate = LWSEngine.Delegate(
                connectionOpened: delegate.connectionOpened,
                post: { _, _, _, _, _, reply in reply(.text(status: 404, "not found\n")) },
                get: { path in path == "/health" ? .text("ok") : nil })
            created.append(LWSEngine(settings: peerSettings, delegate: peerDelegate, metrics: metrics, logger: config.logger))
        }
        try engines.withLock { (current: inout [LWSEngine]) throws(NodeServerError) in
            guard current.isEmpty else { throw .alreadyStarted }
            current = created
        }
        var started: [LWSEngine] = []
        do {
            for engine in created {
                try engine.start()
                started.append(engine)
            }
        } catch {
            for engine in started { engine.abandon() }
            engines.withLock { $0 = [] }
            throw error
        }
        boundPort.withLock { $0 = created[0].port }
        if config.verifier is NoTokenVerifier {
            config.logger.log("WARNING: --auth none: every client is accepted without a token. Development only.")
        }
        let scheme = config.tlsCertificatePath == nil ? "ws" : "wss"
        config.logger.log("listening on \(scheme)://\(config.host):\(created[0].port) "
                          + "(auth \(config.verifier.name)); verifying key \(verifyingKeyHex); rate limits "
                          + (config.rateLimiter.map { $0.limits.summary } ?? "none"))
        if let peer = config.peerListener, created.count == 2 {
            config.logger.log("serving node A's links on \(scheme)://\(peer.host):\(created[1].port)/v3/peer")
        }
        return created[0].port
    }

    /// Closes every connection with 1001 (waiting up to `grace` for steps to end), cancels the
    /// remaining sessions and stops the service thread, then waits at most `sessionDeadline` for the
    /// cancelled sessions to end (a session stuck in an await that ignores cancellation must not hang a
    /// shutdown: issue 32, "a hang must fail fast"). Idempotent.
    /// - Returns: how many sessions were still running at the deadline (logged; 0 on a clean stop).
    @discardableResult
    package func stop(grace: Duration = .seconds(2), sessionDeadline: Duration = .seconds(10)) async -> Int {
        let current = engines.withLock { $0 }
        guard !current.isEmpty else { return 0 }
        await withTaskGroup(of: Void.self) { group in
            for engine in current { group.addTask { await engine.stop(grace: grace) } }
        }
        let tasks = sessions.withLock { Array($0.tasks.values) }
        for task in tasks { task.cancel() }
        let stuck = await Self.waitForAll(tasks, atMost: sessionDeadline)
        if stuck > 0 {
            configuration.logger.log("stopped; \(stuck) session(s) still running \(sessionDeadline) after cancellation")
        } else {
            configuration.logger.log("stopped")
        }
        return stuck
    }

    /// Waits until every task has ended or `limit` has passed, whichever comes first; returns how many had
    /// not ended. Never waits on a task past `limit` (awaiting `Task.value` ignores cancellation).
    static func waitForAll(_ tasks: [Task<Void, Never>], atMost limit: Duration) async -> Int {
        guard !tasks.isEmpty else { return 0 }
        let ended = LockedValue(0)
        let outcome = LockedValue<CheckedContinuation<Void, Never>?>(nil)
        let waiters = LockedValue<[Task<Void, Never>]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            outcome.withLock { $0 = continuation }
            let resume: @Sendable () -> Void = { outcome.withLock { $0.take() }?.resume() }
            var started: [Task<Void, Never>] = [Task {
                try? await Task.sleep(for: limit)
                resume()
            }]
            for task in tasks {
                started.append(Task {
                    await task.value
                    if ended.withLock({ count in count += 1; return count == tasks.count }) { resume() }
                })
            }
            waiters.withLock { $0 = started }
        }
        for waiter in waiters.withLock({ $0 }) { waiter.cancel() }
        return tasks.count - ended.withLock { $0 }
    }

    /// The Prometheus text of `GET /metrics`.
    package func metricsText() -> String { metrics.render() + (configuration.rateLimiter?.metricsText() ?? "") }

    // MARK: Sessions

    private func spawnSession(_ connection: NodeConnection) {
        sessions.withLock { state in
            state.next += 1
            let key = state.next
            state.tasks[key] = Task { [weak self] in
                await self?.runSession(connection)
                _ = self?.sessions.withLock { $0.tasks.removeValue(forKey: key) }
            }
        }
    }

    /// Token first, then the route's handler with the step timeout; always ends with a close.
    private func runSession(_ connection: NodeConnection) async {
        let config = configuration
        let first: NodeConnection.Message
        do {
            first = try await connection.receive(timeout: config.tokenTimeout)
        } catch .timeout {
            // Counted like a bad token (security review finding 6): holding connections open without a
            // token must not be free.
            metrics.authenticationFailed()
            await config.rateLimiter?.recordAuthenticationFailure(from: connection.clientAddress)
            config.logger.log("closing \(connection.route): no token within \(config.tokenTimeout)")
            connection.close(code: .authenticationTimeout)
            return
        } catch {
            return
        }
        let token: String?
        if first.binary {
            token = nil
            connection.unread(first)
        } else {
            // RFC 6750 b64token only (BearerToken): nothing else reaches a verifier or a hook's headers.
            token = String(data: first.data, encoding: .utf8)
            guard BearerToken.isWellFormed(bytes: [UInt8](first.data)) else {
                metrics.authenticationFailed()
                await config.rateLimiter?.recordAuthenticationFailure(from: connection.clientAddress)
                config.logger.log("closing \(connection.route): malformed token message")
                connection.close(code: .unauthorized)
                return
            }
        }
        // session.md §9.5: a block decided by another process of the cluster (the door checked this process's own).
        if let limiter = config.rateLimiter, limiter.cluster != nil,
           case .limited(let retryAfter) = await limiter.checkAddressAcrossCluster(connection.clientAddress) {
            config.logger.log("closing \(connection.route): address blocked for failed authentications (retry after \(retryAfter) s)")
            connection.close(code: .overloaded)
            return
        }
        let principal: Principal
        do {
            // The inter-node link authenticates by its LINK_OPEN frame (session.md §2.3), which the
            // handler verifies and reports through `linkOpened`; the app's token travels inside it and
            // is checked by the session runner.
            if connection.route.mode == .peer {
                guard first.binary else { throw AuthenticationError.invalidToken }
                principal = Principal(subject: "peer-link")
            } else {
                principal = try await config.verifier.verify(token: token).counted(at: connection.clientAddress)
            }
        } catch AuthenticationError.hookUnavailable {
            // The operator's verifier is down: nothing is known about the client, so nothing is counted
            // against its address (security review finding 10); the app may try again later.
            config.logger.log("closing \(connection.route): token verifier unavailable")
            connection.close(code: .overloaded)
            return
        } catch {
            metrics.authenticationFailed()
            await config.rateLimiter?.recordAuthenticationFailure(from: connection.clientAddress)
            config.logger.log("closing \(connection.route): authentication failed (\(error))")
            connection.close(code: .unauthorized)
            return
        }
        var context = StepContext(route: connection.route, params: connection.params, principal: principal,
                                  connection: connection, token: token, clientAddress: connection.clientAddress)
        if connection.route.mode == .peer {
            let (metrics, limiter, logger) = (metrics, config.rateLimiter, config.logger)
            context.linkOpened = { accepted in
                if accepted {
                    connection.markAuthenticated()
                } else {
                    metrics.authenticationFailed()
                    if let limiter { Task { await limiter.recordAuthenticationFailure(from: connection.clientAddress) } }
                    logger.log("peer link refused (\(connection.clientAddress))")
                }
            }
        } else {
            connection.markAuthenticated()
        }
        metrics.stepStarted(connection.route)
        let handler = config.stepHandlers.handler(for: connection.route)
        let stepTimeout = config.stepTimeout
        let watchdog = Task {
            try? await Task.sleep(for: stepTimeout)
            guard !Task.isCancelled else { return }
            config.logger.log("closing \(connection.route): step over \(stepTimeout)")
            connection.close(code: .stepTimeout)
        }
        defer { watchdog.cancel() }
        do {
            try await handler.run(context)
            connection.close(code: .normal)
        } catch NodeServerError.timeout {
            config.logger.log("closing \(connection.route): peer idle over \(config.idleTimeout)")
            connection.close(code: .stepTimeout)
        } catch NodeServerError.connectionClosed(_), NodeServerError.unexpectedText {
            connection.close(code: .malformed)
        } catch {
            config.logger.log("closing \(connection.route): handler failed (\(type(of: error)))")
            connection.close(code: .internalError)
        }
    }

    // MARK: HTTP

    private func servePost(route: NodeRoute, params: String?, token: String?, body: Data,
                           clientAddress: String) async -> HTTPResponse {
        // The address's limits and block were checked before the body was read (LWSEngine.beginHTTP).
        if let limiter = configuration.rateLimiter, limiter.cluster != nil,
           case .limited(let retryAfter) = await limiter.checkAddressAcrossCluster(clientAddress) {
            var response = HTTPResponse.text(status: 429, "rate limited\n")
            response.retryAfter = retryAfter
            return response
        }
        let principal: Principal
        do {
            if let token, !BearerToken.isWellFormed(token) { throw AuthenticationError.invalidToken }
            principal = try await configuration.verifier.verify(token: token).counted(at: clientAddress)
        } catch AuthenticationError.hookUnavailable {
            configuration.logger.log("POST \(route): token verifier unavailable")
            return .text(status: 503, "token verifier unavailable\n")
        } catch {
            metrics.authenticationFailed()
            await configuration.rateLimiter?.recordAuthenticationFailure(from: clientAddress)
            configuration.logger.log("POST \(route): authentication failed (\(error))")
            return .text(status: 401, "unauthorized\n")
        }
        do {
            let response = try await configuration.postHandler.handle(
                PostRequest(route: route, params: params, principal: principal, body: body, token: token,
                            clientAddress: clientAddress))
            return HTTPResponse(status: response.status, contentType: "application/octet-stream", body: response.body)
        } catch {
            configuration.logger.log("POST \(route): handler failed (\(type(of: error)))")
            return .text(status: 500, "internal error\n")
        }
    }

    private func serveGet(_ path: String) -> HTTPResponse? {
        switch path {
        case "/health":
            return .text("ok")
        case "/metrics":
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: Data(metricsText().utf8))
        case "/v3/verifying-key":
            let key = verifyingKeyHex
            let versionsJSON = "[\(SessionConstants.supportedSessionVersions.map(String.init).joined(separator: ","))],"
                + #""protocol_versions":[\#(SessionConstants.supportedProtocolVersions.map(String.init).joined(separator: ","))]"#
            let json: String
            if let trio = configuration.trio {
                let role = trio.certificate.role == .trioA ? "trio-a" : "trio-b"
                json = #"{"verifying_key":"\#(Hex.encode(trio.clusterKey.bytes))","node_key":"\#(key)","role":"\#(role)","#
                    + #""group_id":"\#(Hex.encode(trio.certificate.groupID))","#
                    + #""certificate":"\#(Hex.encode(trio.certificate.encoded))","session_versions":\#(versionsJSON)}"#
            } else {
                json = #"{"verifying_key":"\#(key)","node_key":"\#(key)","role":null,"group_id":null,"#
                    + #""certificate":null,"session_versions":\#(versionsJSON)}"#
            }
            return HTTPResponse(status: 200, contentType: "application/json", body: Data(json.utf8))
        default:
            return nil
        }
    }
}
