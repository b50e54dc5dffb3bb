import MPCCrypto
internal import CWebSockets
import Foundation

/// The libwebsockets side: one context, one service thread. Only `post` (lock + `lws_cancel_service`)
/// is called from other threads; every other member is touched on the service thread alone, which is
/// why the class is `@unchecked Sendable`.
final class LWSEngine: @unchecked Sendable {
    /// What the engine asks of the Swift side (called on the service thread; must not block).
    struct Delegate: Sendable {
        /// An upgrade: route, params and the connection's id are decided; decide nothing here.
        var connectionOpened: @Sendable (NodeConnection) -> Void
        /// A POST body is complete; `reply` may be called from any thread, once.
        var post: @Sendable (_ route: NodeRoute, _ params: String?, _ token: String?, _ body: Data, _ clientAddress: String,
                             _ reply: @escaping @Sendable (HTTPResponse) -> Void) -> Void
        /// A GET on a non-route path: the response, or nil for 404.
        var get: @Sendable (_ path: String) -> HTTPResponse?
    }

    struct Settings: Sendable {
        var host: String
        var port: Int
        var tlsCertificatePath: String?
        var tlsKeyPath: String?
        var maximumMessageSize: Int
        var maximumPostBodySize: Int
        var maximumConnections: Int
        var idleTimeout: Duration
        var routes: NodeRouteTable
        /// session.md §9.5 per-address limits (nil: none).
        var rateLimiter: NodeRateLimiter?
        /// The verifier accepts connections without a token (`--auth none`): app connections count as
        /// authenticated from the start (no first-message limit; `/v3/peer` keeps it, LINK_OPEN first).
        var acceptsMissingToken = false
    }

    private let settings: Settings
    private let delegate: Delegate
    private let metrics: NodeMetrics
    private let logger: NodeLogger
    private let commands = LockedValue<[@Sendable () -> Void]>([])
    private let running = LockedValue(true)
    /// `done`: posts are refused (set before the context is destroyed, so no thread calls
    /// `lws_cancel_service` on a destroyed context); `exited`: the service thread has finished.
    private let finished = LockedValue<(done: Bool, exited: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, false, []))

    // Service thread state.
    private var context: OpaquePointer?
    private var protocols: UnsafeMutablePointer<lws_protocols>?
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var sockets: [UInt64: WebSocketState] = [:]
    private var socketIDs: [UInt: UInt64] = [:]
    /// Upgrades confirmed but not yet established; `counted` is set when the address limit counted it.
    private var pendingUpgrades: [UInt: (route: NodeRoute, params: String?, address: String, counted: Bool)] = [:]
    private var exchanges: [UInt: HTTPExchange] = [:]
    /// POST exchanges between their headers and their answer: they hold a connection place like an
    /// upgrade does (security review finding 5).
    private var openPosts = 0

    /// Whether one more upgrade or POST fits under `maximumConnections` (open sockets, upgrades under way
    /// and POSTs not yet answered all hold a place).
    private var hasFreePlace: Bool { sockets.count + pendingUpgrades.count + openPosts < settings.maximumConnections }
    private var exchangeKeys: [UInt64: UInt] = [:]
    private var nextID: UInt64 = 0
    private let fragmentSize = 256 << 10
    private let writeBuffer: UnsafeMutableRawPointer

    /// The bound port (after `start`).
    private(set) var port = 0

    init(settings: Settings, delegate: Delegate, metrics: NodeMetrics, logger: NodeLogger) {
        self.settings = settings
        self.delegate = delegate
        self.metrics = metrics
        self.logger = logger
        writeBuffer = UnsafeMutableRawPointer.allocate(byteCount: Int(ss_lws_pre()) + max(fragmentSize, 64 << 10), alignment: 16)
    }

    deinit {
        writeBuffer.deallocate()
        for string in cStrings { free(string) }
        protocols?.deallocate()
    }

    private func cString(_ text: String) -> UnsafeMutablePointer<CChar>? {
        guard let copy = strdup(text) else { return nil }
        cStrings.append(copy)
        return copy
    }

    /// Creates the context (binding the port) and starts the service thread.
    func start() throws(NodeServerError) {
        lws_set_log_level(Int32(LLL_ERR), nil)
        let table = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 5)
        protocols = table
        let names = ["http", NodeMode.duo.subprotocol, NodeMode.trio.subprotocol, NodeMode.peer.subprotocol]
        for (index, name) in names.enumerated() {
            var entry = lws_protocols()
            entry.name = UnsafePointer(cString(name))
            entry.callback = lwsCallback
            entry.per_session_data_size = 0
            entry.rx_buffer_size = 64 << 10
            table[index] = entry
        }
        table[4] = lws_protocols()

        var info = lws_context_creation_info()
        info.port = Int32(settings.port)
        let host = settings.host == "localhost" ? "127.0.0.1" : settings.host
        info.iface = UnsafePointer(cString(host))
        info.protocols = UnsafePointer(table)
        let tls = settings.tlsCertificatePath != nil
        info.options = ss_lws_server_options(tls ? 1 : 0, host.contains(":") ? 0 : 1)
        if let certificate = settings.tlsCertificatePath, let key = settings.tlsKeyPath {
            info.ssl_cert_filepath = UnsafePointer(cString(certificate))
            info.ssl_private_key_filepath = UnsafePointer(cString(key))
        }
        info.max_http_header_data = 16 << 10
        info.user = Unmanaged.passUnretained(self).toOpaque()
        guard let created = lws_create_context(&info) else {
            finished.withLock { state in
                state.done = true
                state.exited = true
            }
            throw .startFailed(reason: "cannot listen on \(settings.host):\(settings.port) (address in use, or unusable TLS files)")
        }
        context = created
        if let vhost = lws_get_vhost_by_name(created, "default") {
            port = Int(lws_get_vhost_listen_port(vhost))
        }
        let thread = Thread { [self] in serviceLoop() }
        thread.name = "silentshard-node-lws"
        thread.start()
    }

    private func serviceLoop() {
        while running.withLock({ $0 }) {
            if lws_service(context, 0) < 0 { break }
        }
        finished.withLock { $0.done = true }
        // Destroying the context closes every connection (CLOSED callbacks run here, on this thread).
        lws_context_destroy(context)
        context = nil
        let waiters = finished.withLock { state in
            state.exited = true
            let waiters = state.waiters
            state.waiters = []
            return waiters
        }
        // Commands queued before `done`: run them now (no sockets remain, so sends fail cleanly).
        let leftovers = commands.withLock { queue in
            let drained = queue
            queue.removeAll()
            return drained
        }
        for command in leftovers { command() }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `command` on the service thread.
    /// Returns false (without running it) once the service thread has ended.
    @discardableResult
    func post(_ command: @escaping @Sendable () -> Void) -> Bool {
        finished.withLock { state in
            guard !state.done, let context else { return false }
            commands.withLock { $0.append(command) }
            lws_cancel_service(context)
            return true
        }
    }

    /// Stops the service thread of a started engine at once (another listener of the server failed to bind).
    func abandon() {
        running.withLock { $0 = false }
        post {}
    }

    /// Closes every connection with 1001, waits up to `grace` for them to go, then stops the thread.
    func stop(grace: Duration) async {
        post { [self] in
            for state in sockets.values {
                if state.closeCode == nil { state.closeCode = NodeCloseCode.goingAway.rawValue }
                lws_callback_on_writable(state.wsi)
            }
        }
        let deadline = ContinuousClock.now + grace
        while metrics.openConnections > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        running.withLock { $0 = false }
        post {}   // wakes the service loop so it sees `running` is false
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state in
                if state.exited { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: Swift → service thread

    func send(connectionID: UInt64, data: Data, binary: Bool) async throws {
        guard data.count <= settings.maximumMessageSize else {
            throw NodeServerError.sendTooLarge(limit: settings.maximumMessageSize)
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let accepted = post { [self] in
                guard let state = sockets[connectionID], state.closeCode == nil else {
                    continuation.resume(throwing: NodeServerError.connectionClosed(code: sockets[connectionID]?.closeCode))
                    return
                }
                state.outbox.append(WebSocketState.Outgoing(data: data, binary: binary, continuation: continuation))
                lws_callback_on_writable(state.wsi)
            }
            if !accepted { continuation.resume(throwing: NodeServerError.connectionClosed(code: nil)) }
        }
    }

    func close(connectionID: UInt64, code: NodeCloseCode) {
        post { [self] in
            guard let state = sockets[connectionID], state.closeCode == nil else { return }
            state.closeCode = code.rawValue
            lws_callback_on_writable(state.wsi)
        }
    }

    /// The inter-node link's LINK_OPEN was accepted: the connection stops counting against its
    /// address's connection limit (which bounds unauthenticated sockets; node A opens many links).
    func stopCountingAddress(connectionID: UInt64) {
        post { [self] in
            guard let state = sockets[connectionID], let address = state.countedAddress else { return }
            state.countedAddress = nil
            settings.rateLimiter?.connectionClosed(from: address)
        }
    }

    /// Resumes (or pauses) reading from the connection's socket.
    func setReceiving(connectionID: UInt64, enabled: Bool) {
        post { [self] in
            guard let state = sockets[connectionID] else { return }
            lws_rx_flow_control(state.wsi, enabled ? 1 : 0)
        }
    }

    func reply(exchangeID: UInt64, response: HTTPResponse) {
        post { [self] in
            guard let key = exchangeKeys[exchangeID], let exchange = exchanges[key], exchange.id == exchangeID else { return }
            exchange.response = response
            lws_callback_on_writable(exchange.wsi)
        }
    }

    // MARK: Callback (service thread)

    fileprivate func handle(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                            _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        let key = UInt(bitPattern: wsi.map { UnsafeRawPointer($0) })
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            let pending = commands.withLock { queue in
                let drained = queue
                queue.removeAll()
                return drained
            }
            for command in pending { command() }
            return 0

        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            guard let wsi else { return -1 }
            return confirmUpgrade(wsi, key: key)

        case LWS_CALLBACK_ESTABLISHED:
            guard let wsi, let pending = pendingUpgrades.removeValue(forKey: key) else { return -1 }
            nextID += 1
            let connection = NodeConnection(id: nextID, route: pending.route, params: pending.params,
                                            clientAddress: pending.address, engine: self, idleTimeout: settings.idleTimeout,
                                            authenticated: settings.acceptsMissingToken && pending.route.mode != .peer)
            let state = WebSocketState(wsi: wsi, connection: connection)
            state.countedAddress = pending.counted ? pending.address : nil
            sockets[nextID] = state
            socketIDs[key] = nextID
            metrics.connectionOpened()
            delegate.connectionOpened(connection)
            return 0

        case LWS_CALLBACK_RECEIVE:
            guard let wsi, let id = socketIDs[key], let state = sockets[id] else { return -1 }
            return receive(wsi, state: state, input: input, length: length)

        case LWS_CALLBACK_SERVER_WRITEABLE:
            guard let wsi, let id = socketIDs[key], let state = sockets[id] else { return -1 }
            return writeWebSocket(wsi, state: state)

        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            // lws echoes the peer's close payload. A code no endpoint may send (RFC 6455 §7.4) is answered
            // with 1002 instead: the echo's code is rewritten in place (the reason bytes stay).
            guard let input, length >= 2 else { return length == 1 ? -1 : 0 }
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            if let id = socketIDs[key], let state = sockets[id] { state.peerCloseCode = code }
            if !Self.isValidReceivedCloseCode(code) {
                bytes[0] = 0x03
                bytes[1] = 0xEA   // 1002 protocol error
            }
            return 0

        case LWS_CALLBACK_CLOSED:
            if let id = socketIDs.removeValue(forKey: key), let state = sockets.removeValue(forKey: id) {
                for outgoing in state.outbox {
                    outgoing.continuation.resume(throwing: NodeServerError.connectionClosed(code: state.closeCode))
                }
                state.outbox.removeAll()
                metrics.connectionClosed()
                if let address = state.countedAddress { settings.rateLimiter?.connectionClosed(from: address) }
                state.connection.didClose(code: state.peerCloseCode ?? state.closeCode)
            }
            return 0

        case LWS_CALLBACK_HTTP:
            guard let wsi else { return -1 }
            let path = input.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
            return beginHTTP(wsi, key: key, path: path)

        case LWS_CALLBACK_HTTP_BODY:
            guard let exchange = exchanges[key] else { return -1 }
            if let input, length > 0, !exchange.tooLarge, !exchange.dispatched {
                if exchange.body.count + length > settings.maximumPostBodySize {
                    exchange.tooLarge = true
                    exchange.body = Data()
                } else {
                    exchange.body.append(input.assumingMemoryBound(to: UInt8.self), count: length)
                }
            }
            return 0

        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            guard let wsi, let exchange = exchanges[key], let route = exchange.route else { return -1 }
            guard !exchange.dispatched else { return 0 }
            exchange.dispatched = true
            if exchange.tooLarge {
                exchange.response = .text(status: 413, "too large\n")
                lws_callback_on_writable(wsi)
                return 0
            }
            let id = exchange.id
            delegate.post(route, exchange.params, exchange.token, exchange.body, exchange.clientAddress) { [weak self] response in
                self?.reply(exchangeID: id, response: response)
            }
            exchange.body = Data()
            return 0

        case LWS_CALLBACK_HTTP_WRITEABLE:
            guard let wsi, let exchange = exchanges[key] else { return 0 }
            return writeHTTP(wsi, exchange: exchange, key: key)

        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            removeExchange(key: key)
            return 0

        case LWS_CALLBACK_WSI_DESTROY:
            if let pending = pendingUpgrades.removeValue(forKey: key), pending.counted {
                settings.rateLimiter?.connectionClosed(from: pending.address)
            }
            removeExchange(key: key)
            return 0

        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    private func copy(_ wsi: OpaquePointer, _ body: (UnsafeMutablePointer<CChar>, Int32) -> Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 8192 + 1)
        let count = buffer.withUnsafeMutableBufferPointer { pointer -> Int32 in
            guard let base = pointer.baseAddress else { return -1 }
            return body(base, Int32(pointer.count))
        }
        guard count >= 0, Int(count) < buffer.count else { return nil }
        return String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func params(_ wsi: OpaquePointer) -> String? {
        guard let query = copy(wsi, { ss_lws_copy_query(wsi, $0, $1) }), query.hasPrefix("params=") else { return nil }
        let raw = String(query.dropFirst("params=".count))
        return raw.removingPercentEncoding ?? raw
    }

    /// Refuses an upgrade with a complete HTTP/1.1 response (lws_return_http_status answers an
    /// upgrade as HTTP/1.0, which strict clients refuse to parse).
    private func reject(_ wsi: OpaquePointer, status: Int, retryAfter: UInt32? = nil, upgrade: Bool = true, _ line: String) -> Int32 {
        if upgrade { metrics.upgradeRejected() }
        logger.log(line)
        let phrase = [400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
                      503: "Service Unavailable"][status] ?? "Error"
        let body = "\(status) \(phrase)\n"
        let head = "HTTP/1.1 \(status) \(phrase)\r\ncontent-type: text/plain\r\ncontent-length: \(body.utf8.count)\r\n"
            + (retryAfter.map { "retry-after: \($0)\r\n" } ?? "") + "connection: close\r\n\r\n" + body
        let bytes = Array(head.utf8)
        let pre = Int(ss_lws_pre())
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            (writeBuffer + pre).copyMemory(from: base, byteCount: raw.count)
        }
        _ = lws_write(wsi, writeBuffer.assumingMemoryBound(to: UInt8.self) + pre, bytes.count, LWS_WRITE_HTTP_HEADERS)
        return 1
    }

    private func confirmUpgrade(_ wsi: OpaquePointer, key: UInt) -> Int32 {
        let path = copy(wsi, { ss_lws_copy_uri(wsi, $0, $1) }) ?? ""
        let shown = String(path.prefix(96).unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }.map(Character.init))
        guard let route = settings.routes.route(for: path, post: false) else {
            return reject(wsi, status: 404, "rejected upgrade: unknown route \(shown)")
        }
        let offered = (copy(wsi, { ss_lws_copy_header(wsi, WSI_TOKEN_PROTOCOL, $0, $1) }) ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let others = [NodeMode.duo, .trio, .peer].filter { $0 != route.mode }.map(\.subprotocol)
        guard offered.contains(route.mode.subprotocol), !others.contains(where: offered.contains) else {
            return reject(wsi, status: 400, "rejected upgrade: \(route) without subprotocol \(route.mode.subprotocol)")
        }
        guard hasFreePlace else {
            return reject(wsi, status: 503, "rejected upgrade: \(route): \(settings.maximumConnections) connections open")
        }
        let address: String
        switch clientAddress(wsi) {
        case .success(let resolved): address = resolved
        case .failure(let error):
            return reject(wsi, status: error.httpStatus, "rejected upgrade: \(route): X-Forwarded-For from a trusted proxy \(error)")
        }
        // Every upgrade counts against its address and honours its block, inter-node links too (finding 5);
        // a link stops counting once its LINK_OPEN is accepted (`stopCountingAddress`).
        let counted = settings.rateLimiter != nil
        if counted, let limiter = settings.rateLimiter,
           case .limited(let retryAfter) = limiter.openConnection(from: address) {
            return reject(wsi, status: 429, retryAfter: retryAfter,
                          "rejected upgrade: \(route): rate limited (\(address), retry after \(retryAfter) s)")
        }
        pendingUpgrades[key] = (route, params(wsi), address, counted)
        return 0
    }

    /// The client's address (session.md §9.5): the TCP peer, or the forwarded one when the peer is a trusted
    /// proxy; a trusted proxy's request without a usable `X-Forwarded-For` fails (400/431, second review
    /// finding 11: it was counted against the proxy, so one client spent every proxied client's limits).
    private func clientAddress(_ wsi: OpaquePointer) -> Result<String, ClientAddress.ForwardedForError> {
        var buffer = [CChar](repeating: 0, count: 128)
        let peer = buffer.withUnsafeMutableBufferPointer { pointer -> String in
            guard let base = pointer.baseAddress, lws_get_peer_simple(wsi, base, pointer.count) != nil else { return "" }
            base[pointer.count - 1] = 0
            return String(cString: base)
        }
        let limits = settings.rateLimiter?.limits ?? NodeRateLimits.off
        let trusted = limits.trustedProxies
        let length = trusted.isEmpty ? 0 : Int(lws_hdr_total_length(wsi, WSI_TOKEN_X_FORWARDED_FOR))
        // An oversized header is not copied (the resolver refuses it by its length).
        let forwarded = length == 0 ? nil : length > ClientAddress.maximumForwardedForLength ? ""
            : copy(wsi, { ss_lws_copy_header(wsi, WSI_TOKEN_X_FORWARDED_FOR, $0, $1) })
        return Result { () throws(ClientAddress.ForwardedForError) -> String in
            try ClientAddress.resolve(peer: peer, forwardedFor: forwarded, forwardedForLength: length, trustedProxies: trusted,
                                      ipv6PrefixLength: limits.ipv6PrefixLength)
        }
    }

    /// RFC 6455 §7.4: 1000–1003, 1007–1014 (1012–1014 registered with IANA since) and 3000–4999 may be
    /// received; 1004–1006, 1015, the rest below 3000 and everything from 5000 may not.
    static func isValidReceivedCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    private func receive(_ wsi: OpaquePointer, state: WebSocketState, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        if state.receiving == false {
            state.receiving = true
            state.receivingBinary = lws_frame_is_binary(wsi) != 0
            state.inbound = Data()
        }
        // Before authentication only the first message is read, and at most the token limit of it.
        let limit = state.connection.isAuthenticated
            ? settings.maximumMessageSize : min(settings.maximumMessageSize, state.connection.firstMessageLimit)
        if state.inbound.count + length > limit {
            logger.log("closing \(state.connection.route): message over \(limit) bytes")
            state.closeCode = NodeCloseCode.messageTooLarge.rawValue
            var reason = Array(NodeCloseCode.messageTooLarge.reason.utf8)
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(NodeCloseCode.messageTooLarge.rawValue)), &reason, reason.count)
            return -1
        }
        if let input, length > 0 { state.inbound.append(input.assumingMemoryBound(to: UInt8.self), count: length) }
        if lws_is_final_fragment(wsi) != 0, lws_remaining_packet_payload(wsi) == 0 {
            let message = NodeConnection.Message(data: state.inbound, binary: state.receivingBinary)
            state.inbound = Data()
            state.receiving = false
            metrics.received(bytes: message.data.count)
            if state.connection.deliver(message) { lws_rx_flow_control(wsi, 0) }
        }
        return 0
    }

    private func writeWebSocket(_ wsi: OpaquePointer, state: WebSocketState) -> Int32 {
        guard let outgoing = state.outbox.first else {
            if let code = state.closeCode {
                var reason = Array((NodeCloseCode(rawValue: code)?.reason ?? "").utf8)
                lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &reason, reason.count)
                return -1
            }
            return 0
        }
        let total = outgoing.data.count
        let start = state.sentOffset
        let count = min(fragmentSize, total - start)
        let pre = Int(ss_lws_pre())
        if count > 0 {
            outgoing.data.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return }
                (writeBuffer + pre).copyMemory(from: base + start, byteCount: count)
            }
        }
        let last = start + count == total
        let flags = ss_lws_fragment_flags(outgoing.binary ? 1 : 0, start == 0 ? 1 : 0, last ? 1 : 0)
        let written = lws_write(wsi, writeBuffer.assumingMemoryBound(to: UInt8.self) + pre, count,
                                lws_write_protocol(rawValue: UInt32(bitPattern: flags)))
        guard written >= count else { return -1 }   // CLOSED fails the outbox
        if last {
            state.outbox.removeFirst()
            state.sentOffset = 0
            metrics.sent(bytes: total)
            outgoing.continuation.resume()
        } else {
            state.sentOffset = start + count
        }
        if !state.outbox.isEmpty || state.closeCode != nil { lws_callback_on_writable(wsi) }
        return 0
    }

    private func beginHTTP(_ wsi: OpaquePointer, key: UInt, path: String) -> Int32 {
        metrics.httpRequest()
        nextID += 1
        let exchange = HTTPExchange(id: nextID, wsi: wsi)
        if ss_lws_is_post(wsi) != 0 {
            guard let route = settings.routes.route(for: path, post: true) else {
                logger.log("POST to unknown route")
                _ = lws_return_http_status(wsi, 404, nil)
                return -1
            }
            // RFC 9112 §6.3: Content-Length and Transfer-Encoding together are an attack vector (400); a
            // POST body must come with its length (411: chunked bodies are not served).
            let hasLength = lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0
            if lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING) > 0 || !hasLength {
                let status: UInt32 = hasLength ? 400 : 411
                logger.log("POST refused: \(hasLength ? "Content-Length with Transfer-Encoding" : "no Content-Length") (\(status))")
                _ = lws_return_http_status(wsi, status, nil)
                return -1
            }
            // A POST holds a place until it is answered: it counts against the connection limit and its
            // address's limit and block before its body is read (security review finding 5).
            guard hasFreePlace else {
                return reject(wsi, status: 503, upgrade: false, "POST \(route) refused: \(settings.maximumConnections) connections open")
            }
            // POSTs only: the rate limits (GETs are not limited).
            let address: String
            switch clientAddress(wsi) {
            case .success(let resolved): address = resolved
            case .failure(let error):
                return reject(wsi, status: error.httpStatus, upgrade: false,
                              "POST \(route) refused: X-Forwarded-For from a trusted proxy \(error)")
            }
            if let limiter = settings.rateLimiter {
                if case .limited(let retryAfter) = limiter.openConnection(from: address) {
                    return reject(wsi, status: 429, retryAfter: retryAfter, upgrade: false,
                                  "POST \(route): rate limited (\(address), retry after \(retryAfter) s)")
                }
                exchange.countedAddress = address
            }
            openPosts += 1
            exchange.holdsPlace = true
            exchange.route = route
            exchange.params = params(wsi)
            exchange.clientAddress = address
            removeExchange(key: key)   // a request on a kept-alive connection whose last exchange was not answered
            if let authorization = copy(wsi, { ss_lws_copy_header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, $0, $1) }),
               authorization.hasPrefix("Bearer ") {
                exchange.token = String(authorization.dropFirst("Bearer ".count))
            }
            exchanges[key] = exchange
            exchangeKeys[exchange.id] = key
            return 0   // the body follows (HTTP_BODY, then HTTP_BODY_COMPLETION)
        }
        guard ss_lws_is_get(wsi) != 0, let response = delegate.get(path) else {
            _ = lws_return_http_status(wsi, 404, nil)
            return -1
        }
        exchange.response = response
        exchanges[key] = exchange
        exchangeKeys[exchange.id] = key
        lws_callback_on_writable(wsi)
        return 0
    }

    /// Forgets the exchange of `key` and gives back the place it held.
    private func removeExchange(key: UInt) {
        guard let exchange = exchanges.removeValue(forKey: key) else { return }
        exchangeKeys.removeValue(forKey: exchange.id)
        if exchange.holdsPlace {
            exchange.holdsPlace = false
            openPosts -= 1
        }
        if let address = exchange.countedAddress {
            exchange.countedAddress = nil
            settings.rateLimiter?.connectionClosed(from: address)
        }
    }

    private func writeHTTP(_ wsi: OpaquePointer, exchange: HTTPExchange, key: UInt) -> Int32 {
        guard let response = exchange.response else { return 0 }
        let pre = Int(ss_lws_pre())
        if !exchange.headSent {
            exchange.headSent = true
            let failed = ss_lws_write_http_head(wsi, UInt32(response.status), response.contentType,
                                                UInt(response.body.count), response.retryAfter.map(Int64.init) ?? -1,
                                                writeBuffer.assumingMemoryBound(to: UInt8.self), pre + 4096)
            guard failed == 0 else { return -1 }
            if !response.body.isEmpty {
                lws_callback_on_writable(wsi)
                return 0
            }
        } else {
            let start = exchange.sentOffset
            let count = min(64 << 10, response.body.count - start)
            response.body.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, count > 0 else { return }
                (writeBuffer + pre).copyMemory(from: base + start, byteCount: count)
            }
            let last = start + count == response.body.count
            let written = lws_write(wsi, writeBuffer.assumingMemoryBound(to: UInt8.self) + pre, count,
                                    last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP)
            guard written >= count else { return -1 }
            exchange.sentOffset = start + count
            if !last {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
        removeExchange(key: key)
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }
}

/// Service-thread state of one WebSocket.
final class WebSocketState {
    struct Outgoing {
        var data: Data
        var binary: Bool
        var continuation: CheckedContinuation<Void, any Error>
    }

    let wsi: OpaquePointer
    let connection: NodeConnection
    var inbound = Data()
    var receiving = false
    var receivingBinary = false
    var outbox: [Outgoing] = []
    var sentOffset = 0
    /// Set once a close was requested (sent after the outbox drains).
    var closeCode: UInt16?
    var peerCloseCode: UInt16?
    /// The address the per-address connection limit counted this connection against, if it did.
    var countedAddress: String?

    init(wsi: OpaquePointer, connection: NodeConnection) {
        self.wsi = wsi
        self.connection = connection
    }
}

/// Service-thread state of one HTTP request.
final class HTTPExchange {
    let id: UInt64
    let wsi: OpaquePointer
    var clientAddress = ""
    /// A POST counted in `openPosts` until it is answered or dropped.
    var holdsPlace = false
    /// The address the per-address limit counted this POST against, if it did.
    var countedAddress: String?
    var route: NodeRoute?
    var params: String?
    var token: String?
    var body = Data()
    var tooLarge = false
    /// The body was handed to the POST handler: a request runs it at most once, whatever lws reports
    /// afterwards (security review finding 7).
    var dispatched = false
    var response: HTTPResponse?
    var headSent = false
    var sentOffset = 0

    init(id: UInt64, wsi: OpaquePointer) {
        self.id = id
        self.wsi = wsi
    }
}

/// A complete HTTP response.
struct HTTPResponse: Sendable {
    var status: Int
    var contentType: String
    var body: Data
    /// Seconds for a `Retry-After` header (429, 503), if any.
    var retryAfter: UInt32? = nil

    static func text(status: Int = 200, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: Data(text.utf8))
    }
}

/// The one C callback of every protocol: finds the engine through the context's user pointer.
private func lwsCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                         _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let pointer = lws_context_user(context) else {
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
    let engine = Unmanaged<LWSEngine>.fromOpaque(pointer).takeUnretainedValue()
    return engine.handle(wsi, reason, user, input, length)
}
