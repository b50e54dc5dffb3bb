import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore

/// `silentshard node`: runs the cloud node's server until SIGINT/SIGTERM.
enum NodeCommand {
    static let usage = """
        usage: silentshard node --auth MODE --node-key PATH [options]

          --listen HOST:PORT        listen address (default 127.0.0.1:8080; [::1]:8080 for IPv6)   SILENTSHARD_LISTEN
          --tls-cert PATH           PEM certificate chain (with --tls-key: wss/https)              SILENTSHARD_TLS_CERT
          --tls-key PATH            PEM private key                                                SILENTSHARD_TLS_KEY
          --database PATH|URL       node share store: a SQLite file, or a PostgreSQL URL           SILENTSHARD_DATABASE
                                    (postgres://USER@HOST:PORT/DB or postgresql://…; processes of
                                    one role may share it: a cluster); serves the duo routes with it
          --master-key PATH         key sealing shares at rest: 64 hex characters (with --database) SILENTSHARD_MASTER_KEY
          --node-key PATH           Ed25519 node key: 64 hex characters (the seed)                 SILENTSHARD_NODE_KEY
          --generate-key            create --node-key (and --master-key) first (refuses to overwrite)
          --auth MODE               none | token-file:PATH | jwt-hs256:SECRETFILE | hook:URL        SILENTSHARD_AUTH
          --allow-insecure-auth-none  let --auth none listen on a non-loopback address (development only)
          --jwt-issuer ISS          jwt-hs256: the `iss` claim every token must carry               SILENTSHARD_JWT_ISSUER
          --jwt-audience AUD        jwt-hs256: a value the `aud` claim must contain                SILENTSHARD_JWT_AUDIENCE
          --max-message-size BYTES  default 1048576                                                 SILENTSHARD_MAX_MESSAGE_SIZE
          --step-timeout SECONDS    whole-step limit, default 120                                  SILENTSHARD_STEP_TIMEOUT
          --max-sessions N          concurrent WebSocket connections, default 1024                 SILENTSHARD_MAX_SESSIONS
          --rate-limits SPEC        abuse limits (session.md §9.5): standard (default), off, or     SILENTSHARD_RATE_LIMITS
                                    standard with overrides NAME=N,… (0 = off): connections-per-address
                                    (64), auth-failures-per-minute (10), block-seconds (600),
                                    key-creations-per-hour (10, per principal), signing-sessions-per-key
                                    (8), device-failures-per-minute (5), request-failures-per-minute
                                    (20, per principal and per address), ipv6-prefix (64: IPv6 clients
                                    counted per /64; 128 per address); counted per process
          --trusted-proxies ADDRS   comma-separated proxy addresses whose X-Forwarded-For names     SILENTSHARD_TRUSTED_PROXIES
                                    the client (e.g. 127.0.0.1 behind a local nginx); without it
                                    every client behind a proxy shares the proxy's address limits
          --retired-key-retention DAYS                                                             SILENTSHARD_RETIRED_KEY_RETENTION
                                    how long a retired hard-derived child's owner is told
                                    KEY_RETIRED (default 90); then its tombstone is purged
          --audit-retention-days N  audit log lines older than N days are deleted (default 90;     SILENTSHARD_AUDIT_RETENTION_DAYS
                                    0 keeps them forever)
          --role ROLE               duo (default) | trio-a | trio-b (trio needs --database)         SILENTSHARD_ROLE
          --cluster-key HEX         trio: the cluster's Ed25519 verifying key (64 hex; the apps'   SILENTSHARD_CLUSTER_KEY
                                    cloudVerifyingKey)
          --certificate PATH        trio: this node's certificate (284 hex; silentshard node-cert)  SILENTSHARD_CERTIFICATE
          --peer URL                trio-a: node B's peer listener (ws://HOST:PORT or wss://…)      SILENTSHARD_PEER
          --peer-listen HOST:PORT   trio-b (required): where node A's links are served (/v3/peer    SILENTSHARD_PEER_LISTEN
                                    only, never on --listen); a private address
          --allow-insecure-peer     let --peer be ws:// to a non-loopback host, or --peer-listen
                                    serve a non-loopback address without TLS (a private network)

        usage: silentshard node --database PATH|URL --master-key PATH --rotate-master-key NEWPATH
          re-seals every share under the key in NEWPATH (created, 0600, if missing) in one transaction,
          then exits; stop the node (every process of the cluster) first, restart it with
          --master-key NEWPATH, destroy the old key.

        usage: silentshard node restore-fence --database PATH|URL --master-key PATH [--reason TEXT]
          after restoring the database from a backup: invalidates every presignature stored before
          (docs/node-server.md "Backup and restore"); stop every node process of the role first
        """

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Parses flags (falling back to the environment), starts the server, waits for a signal.
    static func main(_ arguments: [String]) async -> Int32 {
        if arguments.first == "restore-fence" { return RestoreFenceCommand.main(Array(arguments.dropFirst())) }
        do {
            let options = try parse(arguments, environment: ProcessInfo.processInfo.environment)
            if options["help"] != nil {
                print(usage)
                return 0
            }
            if let newKeyPath = options["--rotate-master-key"] {
                try rotateMasterKey(options, newKeyPath: newKeyPath)
                return 0
            }
            // Signal handling first: once the port is printed, a supervisor may send SIGTERM at once.
            let termination = TerminationSignals()
            let auditRetentionDays = try auditRetentionDays(options)
            let (server, store) = try makeServer(options)
            try server.start()
            // Garbage collection: expired presignatures and finish records past retention (finding 9).
            let purging = store?.startPurging(every: .seconds(60), auditRetention: auditRetentionDays * 24 * 3600) { line in
                FileHandle.standardError.write(Data("\(Date().ISO8601Format()) node: \(line)\n".utf8))
            }
            defer { purging?.cancel() }
            // Unbuffered: supervisors and tests read these lines through a pipe.
            FileHandle.standardOutput.write(Data(("silentshard node listening on port \(server.port)\n"
                + (server.peerPort.map { "silentshard node peer link listening on port \($0)\n" } ?? "")
                + "node verifying key (Ed25519): \(server.verifyingKeyHex)\n"
                + (options["--database"].map { "node store: \(NodeStoreLocation($0).redactedDescription)\n" } ?? "")).utf8))
            await termination.wait()
            await server.stop(grace: .seconds(5))
            return 0
        } catch {
            FileHandle.standardError.write(Data("silentshard node: \(error)\n\n\(usage)\n".utf8))
            return 2
        }
    }

    private static let flags: [String: String] = [
        "--listen": "SILENTSHARD_LISTEN", "--tls-cert": "SILENTSHARD_TLS_CERT", "--tls-key": "SILENTSHARD_TLS_KEY",
        "--database": "SILENTSHARD_DATABASE", "--master-key": "SILENTSHARD_MASTER_KEY", "--node-key": "SILENTSHARD_NODE_KEY", "--auth": "SILENTSHARD_AUTH",
        "--max-message-size": "SILENTSHARD_MAX_MESSAGE_SIZE", "--step-timeout": "SILENTSHARD_STEP_TIMEOUT",
        "--max-sessions": "SILENTSHARD_MAX_SESSIONS", "--rotate-master-key": "SILENTSHARD_ROTATE_MASTER_KEY", "--role": "SILENTSHARD_ROLE",
        "--jwt-issuer": "SILENTSHARD_JWT_ISSUER", "--jwt-audience": "SILENTSHARD_JWT_AUDIENCE",
        "--cluster-key": "SILENTSHARD_CLUSTER_KEY", "--certificate": "SILENTSHARD_CERTIFICATE", "--peer": "SILENTSHARD_PEER",
        "--peer-listen": "SILENTSHARD_PEER_LISTEN",
        "--rate-limits": "SILENTSHARD_RATE_LIMITS", "--trusted-proxies": "SILENTSHARD_TRUSTED_PROXIES",
        "--retired-key-retention": "SILENTSHARD_RETIRED_KEY_RETENTION",
        "--audit-retention-days": "SILENTSHARD_AUDIT_RETENTION_DAYS",
    ]

    /// `--audit-retention-days` (default 90; 0 keeps the audit log forever).
    static func auditRetentionDays(_ options: [String: String]) throws -> TimeInterval {
        guard let text = options["--audit-retention-days"] else { return NodeShareStore.defaultAuditRetention / (24 * 3600) }
        guard let days = Int(text), days >= 0, days <= 100_000 else {
            throw Failure("--audit-retention-days needs a whole number of days from 0 to 100000")
        }
        return TimeInterval(days)
    }

    static func parse(_ arguments: [String], environment: [String: String]) throws -> [String: String] {
        var options: [String: String] = [:]
        for (flag, variable) in flags {
            if let value = environment[variable], !value.isEmpty { options[flag] = value }
        }
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--generate-key": options["--generate-key"] = "1"
            case "--allow-insecure-auth-none": options["--allow-insecure-auth-none"] = "1"
            case "--allow-insecure-peer": options["--allow-insecure-peer"] = "1"
            case "--help", "-h": options["help"] = "1"
            default:
                var name = argument
                var value: String?
                if let equals = argument.firstIndex(of: "=") {
                    name = String(argument[..<equals])
                    value = String(argument[argument.index(after: equals)...])
                }
                guard flags[name] != nil else { throw Failure("unknown option \(name)") }
                guard let given = value ?? iterator.next() else { throw Failure("\(name) needs a value") }
                options[name] = given
            }
        }
        return options
    }

    /// The server, and its share store when `--database` is given.
    static func makeServer(_ options: [String: String]) throws -> (NodeServer, NodeShareStore?) {
        let (host, port) = try listenAddress(options["--listen"] ?? "127.0.0.1:8080")
        guard let keyPath = options["--node-key"] else { throw Failure("--node-key is required") }
        let nodeKey = try loadOrGenerateKey(path: keyPath, generate: options["--generate-key"] != nil)
        guard let auth = options["--auth"] else { throw Failure("--auth is required (none is for development only)") }
        let verifier = try makeVerifier(auth, options: options)
        // Security review finding 13: `none` accepts every client as one principal.
        if verifier is NoTokenVerifier, !isLoopback(host), options["--allow-insecure-auth-none"] == nil {
            throw Failure("--auth none accepts every client without a token, so it listens on loopback only; "
                          + "--listen \(host) needs --allow-insecure-auth-none (development only)")
        }
        if let database = options["--database"], case .sqlite = NodeStoreLocation(database) {
            let parent = URL(fileURLWithPath: database).deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw Failure("--database: directory \(parent) does not exist")
            }
        }
        var config = NodeServerConfiguration(host: host, port: port, nodeKey: nodeKey, verifier: verifier)
        let limits = try rateLimits(options)
        config.rateLimiter = NodeRateLimiter(limits: limits)
        var openedStore: NodeShareStore?
        if let database = options["--database"] {
            guard let masterKeyPath = options["--master-key"] else { throw Failure("--database needs --master-key") }
            let masterKey = try loadOrGenerateMasterKey(path: masterKeyPath, generate: options["--generate-key"] != nil)
            let store = try openStore(database: database, masterKey: masterKey,
                                      retiredKeyRetention: try retiredKeyRetention(options))
            openedStore = store
            // session.md §9.5 (P5): the limits that count events over time are shared by every process on this database.
            let rateLimiter = NodeRateLimiter(limits: limits, cluster: ClusterRateLimits(store: store))
            config.rateLimiter = rateLimiter
            switch options["--role"] ?? "duo" {
            case "duo":
                let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow(), rateLimiter: rateLimiter)
                config.stepHandlers = StepHandlerRegistry(fallback: NodeStepHandler(runner: runner))
                config.postHandler = NodePostHandler(runner: runner)
            case "trio-a", "trio-b":
                let runner = try trioRunner(options, nodeKey: nodeKey, store: store, verifier: verifier, rateLimiter: rateLimiter)
                config.stepHandlers = StepHandlerRegistry(fallback: NodeStepHandler(runner: runner))
                config.postHandler = NodePostHandler(runner: runner)
                if let identity = runner.party.trioIdentity { config.trio = (identity.certificate, identity.clusterKey) }
                config.peerListener = try peerListener(options)
            default:
                throw Failure("--role must be duo, trio-a or trio-b")
            }
        } else if options["--role"].map({ $0 != "duo" }) ?? false {
            throw Failure("--role \(options["--role"] ?? "") needs --database and --master-key")
        }
        if options["--peer-listen"] != nil, options["--role"] != "trio-b" {
            throw Failure("--peer-listen is for --role trio-b (node B serves node A's links there)")
        }
        config.tlsCertificatePath = options["--tls-cert"]
        config.tlsKeyPath = options["--tls-key"]
        if let text = options["--max-message-size"] {
            guard let value = Int(text), value > 0 else { throw Failure("--max-message-size must be a positive integer") }
            config.maximumMessageSize = value
        }
        if let text = options["--step-timeout"] {
            guard let value = Int(text), value > 0 else { throw Failure("--step-timeout must be positive seconds") }
            config.stepTimeout = .seconds(value)
        }
        if let text = options["--max-sessions"] {
            guard let value = Int(text), value > 0 else { throw Failure("--max-sessions must be a positive integer") }
            config.maximumConnections = value
            config.peerListener?.maximumConnections = value
        }
        if let peer = config.peerListener, !isLoopback(peer.host), config.tlsCertificatePath == nil,
           options["--allow-insecure-peer"] == nil {
            throw Failure("--peer-listen \(peer.host) without --tls-cert is unencrypted: the links carry the apps' tokens "
                          + "and sessions; use TLS, or --allow-insecure-peer on a private network you trust")
        }
        return (NodeServer(configuration: config), openedStore)
    }

    /// The share store at `--database`: a SQLite file path or a PostgreSQL URL (`NodeStoreLocation`).
    static func openStore(database: String, masterKey: NodeMasterKey,
                          retiredKeyRetention: TimeInterval = NodeShareStore.defaultRetiredKeyRetention) throws -> NodeShareStore {
        try NodeShareStore(location: NodeStoreLocation(database), masterKey: masterKey, retiredKeyRetention: retiredKeyRetention)
    }

    /// `--retired-key-retention DAYS` (second review finding 8): a whole number of days, 1 to 36500.
    static func retiredKeyRetention(_ options: [String: String]) throws -> TimeInterval {
        guard let text = options["--retired-key-retention"] else { return NodeShareStore.defaultRetiredKeyRetention }
        guard let days = Int(text), (1...36_500).contains(days) else {
            throw Failure("--retired-key-retention must be a whole number of days from 1 to 36500")
        }
        return TimeInterval(days) * 86_400
    }

    /// A trio node's runner: its certificate must be for this node key and role, valid under the
    /// cluster key; node A links to `--peer`.
    static func trioRunner(_ options: [String: String], nodeKey: Ed25519.SigningKey, store: NodeShareStore,
                           verifier: any TokenVerifier, rateLimiter: NodeRateLimiter) throws -> NodeStepRunner {
        let role = options["--role"] ?? ""
        guard let clusterHex = options["--cluster-key"], let clusterBytes = try? Hex.decode(clusterHex), clusterBytes.count == 32,
              let clusterKey = try? Ed25519.VerifyingKey(bytes: clusterBytes)
        else { throw Failure("--role \(role) needs --cluster-key (64 hex characters)") }
        guard let certificatePath = options["--certificate"],
              let data = FileManager.default.contents(atPath: certificatePath),
              let certificateBytes = try? Hex.decode(String(decoding: data, as: UTF8.self)
                  .trimmingCharacters(in: .whitespacesAndNewlines)),
              let certificate = try? NodeCertificate(bytes: certificateBytes)
        else { throw Failure("--role \(role) needs --certificate PATH (the node certificate as 284 hex characters)") }
        guard certificate.role == (role == "trio-a" ? .trioA : .trioB) else {
            throw Failure("--certificate is not a \(role) certificate")
        }
        let identity: TrioNodeIdentity
        do { identity = try TrioNodeIdentity(nodeKey: nodeKey, certificate: certificate, clusterKey: clusterKey) } catch {
            throw Failure("--certificate: \(error)")
        }
        var peer: (any TrioPeerConnector)?
        if role == "trio-a" {
            guard let url = options["--peer"], url.hasPrefix("ws://") || url.hasPrefix("wss://") else {
                throw Failure("--role trio-a needs --peer ws://HOST:PORT (node B)")
            }
            // Security review finding 13: the link carries the apps' tokens and every relayed frame.
            if url.hasPrefix("ws://"), let peerHost = URL(string: url)?.host, !isLoopback(peerHost),
               options["--allow-insecure-peer"] == nil {
                throw Failure("--peer \(url) is unencrypted: the link carries the apps' tokens and sessions; "
                              + "use wss://, or --allow-insecure-peer on a private network you trust")
            }
            peer = WebSocketPeerConnector(baseURL: url)
        }
        // Node B checks the app token A forwards in LINK_OPEN with its own --auth verifier (session.md §6.1 rule 3),
        // and authorizes with its principal (scopes, key owner, device binding; session.md §9.1–9.3).
        return NodeStepRunner(identity: identity, store: store, peer: peer, replayWindow: try ReplayWindow(),
                              tokenVerifier: verifier, rateLimiter: rateLimiter)
    }

    /// Node B's `--peer-listen` (security review finding 5: `/v3/peer` only there, never on `--listen`).
    static func peerListener(_ options: [String: String]) throws -> PeerListener? {
        guard options["--role"] == "trio-b" else { return nil }
        guard let text = options["--peer-listen"] else {
            throw Failure("--role trio-b needs --peer-listen HOST:PORT (where node A's links are served; a private address)")
        }
        let (host, port): (String, Int)
        do { (host, port) = try listenAddress(text) } catch { throw Failure("--peer-listen must be HOST:PORT") }
        return PeerListener(host: host, port: port)
    }

    /// `--rate-limits` and `--trusted-proxies`.
    static func rateLimits(_ options: [String: String]) throws -> NodeRateLimits {
        var limits: NodeRateLimits
        do { limits = try NodeRateLimits(parsing: options["--rate-limits"] ?? "standard") } catch {
            throw Failure("--rate-limits: \(error)")
        }
        if let proxies = options["--trusted-proxies"] {
            limits.trustedProxies = Set(proxies.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty })
        }
        return limits
    }

    /// Whether `host` is this machine only: 127.0.0.0/8, ::1 or localhost.
    static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    static func listenAddress(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port)
        else { throw Failure("--listen must be HOST:PORT") }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Failure("--listen must be HOST:PORT") }
        return (host, port)
    }

    static func makeVerifier(_ spec: String, options: [String: String] = [:]) throws -> any TokenVerifier {
        if spec == "none" { return NoTokenVerifier() }
        guard let colon = spec.firstIndex(of: ":") else { throw Failure("unknown --auth mode") }
        let kind = spec[..<colon]
        let argument = String(spec[spec.index(after: colon)...])
        switch kind {
        case "token-file": return try StaticTokenVerifier(contentsOf: argument)
        case "jwt-hs256":
            return try JWTHS256Verifier(secretFile: argument, issuer: options["--jwt-issuer"], audience: options["--jwt-audience"])
        case "hook": return try HookTokenVerifier(url: argument)
        default: throw Failure("unknown --auth mode \(kind)")
        }
    }

    /// `--rotate-master-key`: re-seals the database under a new master key (`NodeShareStore.rotateMasterKey`).
    static func rotateMasterKey(_ options: [String: String], newKeyPath: String) throws {
        guard let database = options["--database"], let currentPath = options["--master-key"] else {
            throw Failure("--rotate-master-key needs --database and --master-key (the current key)")
        }
        let location = NodeStoreLocation(database)
        if case .sqlite = location, !FileManager.default.fileExists(atPath: database) {
            throw Failure("--database: \(database) does not exist")
        }
        let current = try loadOrGenerateMasterKey(path: currentPath, generate: false)
        let new = try loadOrGenerateMasterKey(path: newKeyPath, generate: true)
        let report = try NodeShareStore.rotateMasterKey(location: location, from: current, to: new)
        print("re-sealed \(report.keyshares) keyshares and \(report.presignatures) presignatures under \(newKeyPath); "
              + "start the node with --master-key \(newKeyPath) and destroy \(currentPath)")
    }

    /// Reads the master key (64 hex characters), or creates the file (mode 0600) when `generate` and
    /// it does not exist yet (an existing master key is always kept: it seals the stored shares).
    static func loadOrGenerateMasterKey(path: String, generate: Bool) throws -> NodeMasterKey {
        if generate && !FileManager.default.fileExists(atPath: path) {
            let key = SecureRandom.bytes(count: 32)
            guard FileManager.default.createFile(atPath: path, contents: Data((Hex.encode(key) + "\n").utf8),
                                                 attributes: [.posixPermissions: 0o600])
            else { throw Failure("--master-key: cannot create \(path)") }
        }
        guard let data = FileManager.default.contents(atPath: path),
              let text = String(data: data, encoding: .utf8),
              let bytes = try? Hex.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32
        else { throw Failure("--master-key: \(path) must hold 64 hex characters") }
        return try NodeMasterKey(bytes: bytes)
    }

    /// Reads the seed (64 hex characters), or creates the file (mode 0600) when `generate`.
    static func loadOrGenerateKey(path: String, generate: Bool) throws -> Ed25519.SigningKey {
        if generate {
            guard !FileManager.default.fileExists(atPath: path) else { throw Failure("--generate-key: \(path) exists; not overwriting") }
            let key = Ed25519.SigningKey()
            guard FileManager.default.createFile(atPath: path, contents: Data((Hex.encode(key.seed) + "\n").utf8),
                                                 attributes: [.posixPermissions: 0o600])
            else { throw Failure("--generate-key: cannot write \(path)") }
            return key
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure("--node-key: cannot read \(path)") }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.utf8.count == 64, let seed = try? Hex.decode(text), let key = try? Ed25519.SigningKey(seed: seed) else {
            throw Failure("--node-key: \(path) is not 64 hex characters")
        }
        return key
    }
}
