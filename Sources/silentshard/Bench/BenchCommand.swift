import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// `silentshard bench`: operation latency end to end over loopback WebSocket against a real node
/// process and over the in-memory transport, node throughput under concurrent clients, and the
/// single-party baselines — as a table, JSON, Markdown and an SVG chart. A benchmark, not a test:
/// nothing fails on a slow machine; goals are reported as met or missed.
enum BenchCommand {
    static let usage = """
        usage: silentshard bench [options]     (build with -c release: debug figures are meaningless)

          --modes duo,trio                  modes (trio: WebSocket only, node processes A and B)
          --algorithms ecdsa,eddsa          algorithms
          --operations keygen,sign,refresh,import,export,preSign,preSignFinal,recover,hardDerivation
                                            (duo: all but recover and hardDerivation; export, preSign and
                                            preSignFinal over WebSocket only; recover and hardDerivation are
                                            trio ECDSA)
          --transports websocket,memory     loopback WebSocket to node processes / in-process pipe (duo)
          --runs N                          timed runs per operation (default 20, at least 1)
          --warmup N                        untimed runs first (default 3)
          --clients 1,4,16,64               concurrent clients for the throughput runs ("" = none)
          --seconds S                       length of each throughput run (default 5)
          --pin                             latency runs over WebSocket with this process (the app) on CPU 0
                                            and node processes on CPU 1 (Linux, ≥ 2 CPUs): the parties compute
                                            on separate cores, as on separate machines; in-memory and
                                            throughput runs always use every core
          --rtt MS                          also run every WebSocket operation through a loopback proxy that
                                            delays each direction by MS/2, and report the round trips each
                                            costs: (median at RTT MS − median at RTT 0) / MS
          --tls                             WebSocket runs over wss (and HTTPS POSTs) to nodes with a
                                            self-signed certificate made by the openssl command; with --rtt the
                                            round trips include the TLS 1.3 handshake
          --json FILE  --markdown FILE  --svg FILE
        """

    struct Options {
        var modes: Set<String> = ["duo", "trio"]
        var algorithms = ["ecdsa", "eddsa"]
        var operations = Set(DuoBench.operations + TrioBench.operations)
        var transports = ["websocket", "memory"]
        var runs = 20
        var warmup = 3
        var clients = [1, 4, 16, 64]
        var seconds = 5.0
        var json: String?
        var markdown: String?
        var svg: String?
        var pin = false
        var rtt: Int?
        var tls = false
    }

    static func main(_ arguments: [String]) async -> Int32 {
        do {
            guard let options = try parse(arguments) else {
                print(usage)
                return 0
            }
            #if DEBUG
            print("warning: debug build; figures are meaningless. Use: swift run -c release silentshard bench")
            #endif
            let report = try await run(options)
            print(report.markdown)
            if let path = options.json { try Data((report.json.serialized + "\n").utf8).write(to: URL(fileURLWithPath: path)) }
            if let path = options.markdown { try Data(report.markdown.utf8).write(to: URL(fileURLWithPath: path)) }
            if let path = options.svg { try Data(SVGChart.render(report.results).utf8).write(to: URL(fileURLWithPath: path)) }
            return 0
        } catch {
            FileHandle.standardError.write(Data("silentshard bench: \(error)\n\n\(usage)\n".utf8))
            return 1
        }
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let value = iterator.next() else { throw BenchError("\(flag) needs a value") }
            return value
        }
        func list(_ text: String) -> [String] { text.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
        while let argument = iterator.next() {
            switch argument {
            case "--help", "-h": return nil
            case "--modes":
                options.modes = Set(list(try value(argument)))
                guard options.modes.isSubset(of: ["duo", "trio"]) else { throw BenchError("--modes: duo, trio") }
            case "--algorithms":
                options.algorithms = list(try value(argument))
                guard Set(options.algorithms).isSubset(of: ["ecdsa", "eddsa"]) else { throw BenchError("--algorithms: ecdsa, eddsa") }
            case "--operations":
                options.operations = Set(list(try value(argument)))
                let known = Set(DuoBench.operations + TrioBench.operations)
                guard options.operations.isSubset(of: known) else {
                    throw BenchError("--operations: \(known.sorted().joined(separator: ", "))")
                }
            case "--transports":
                options.transports = list(try value(argument))
                guard Set(options.transports).isSubset(of: ["websocket", "memory"]) else { throw BenchError("--transports: websocket, memory") }
            case "--runs":
                guard let runs = Int(try value(argument)), runs >= 1 else { throw BenchError("--runs must be ≥ 1") }
                options.runs = runs
            case "--warmup":
                guard let warmup = Int(try value(argument)), warmup >= 0 else { throw BenchError("--warmup must be ≥ 0") }
                options.warmup = warmup
            case "--clients":
                let text = try value(argument)
                let clients = list(text).compactMap { Int($0) }
                guard clients.count == list(text).count, clients.allSatisfy({ $0 >= 1 }) else { throw BenchError("--clients: positive integers") }
                options.clients = clients
            case "--seconds":
                guard let seconds = Double(try value(argument)), seconds > 0 else { throw BenchError("--seconds must be > 0") }
                options.seconds = seconds
            case "--json": options.json = try value(argument)
            case "--markdown": options.markdown = try value(argument)
            case "--svg": options.svg = try value(argument)
            case "--rtt":
                guard let rtt = Int(try value(argument)), rtt >= 1, rtt <= 2_000 else { throw BenchError("--rtt: 1…2000 ms") }
                options.rtt = rtt
            case "--tls": options.tls = true
            case "--pin":
                guard CPUPinning.available else { throw BenchError("--pin needs Linux and at least 2 CPUs") }
                options.pin = true
            default: throw BenchError("unknown option \(argument)")
            }
        }
        return options
    }

    /// The delayed rows with `rttMs` and `roundTrips` (against the same operation's direct median).
    static func roundTrips(_ delayed: [BenchResult], against direct: [BenchResult], rtt: Int) -> [BenchResult] {
        delayed.map { row in
            var row = row
            row.rttMs = rtt
            if let base = direct.first(where: { $0.mode == row.mode && $0.algorithm == row.algorithm && $0.operation == row.operation }) {
                row.roundTrips = (row.sample.medianMs - base.sample.medianMs) / Double(rtt)
            }
            return row
        }
    }

    static func run(_ options: Options) async throws -> BenchReport {
        // --pin: the app on CPU 0 while it talks to node processes; every CPU for in-process runs.
        func pinApp(_ websocket: Bool) throws {
            guard options.pin else { return }
            let done = websocket ? CPUPinning.pin(process: 0, toCPU: 0) : CPUPinning.release(process: 0)
            guard done else { throw BenchError("--pin: could not set this process's CPUs") }
        }
        let baselines = Self.baselines()
        var results: [BenchResult] = []
        let directory = NSTemporaryDirectory() + "silentshard-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tls = options.tls ? try BenchTLS.make(directory: directory) : nil
        let wsLabel = options.tls ? "wss" : "websocket"

        for transport in options.transports where options.modes.contains("duo") {
            try pinApp(transport == "websocket")
            let node = transport == "websocket" ? try duoNode(directory: directory, tls: tls) : nil
            if options.pin { node?.pin(toCPU: 1) }
            defer { node?.stop() }
            for name in options.algorithms {
                let algorithm: Keyshare.Algorithm = name == "ecdsa" ? .ecdsa : .eddsa
                FileHandle.standardError.write(Data("bench: duo \(name) over \(transport)…\n".utf8))
                let target = try node.map { DuoBench.websocketTarget(port: $0.port, cloudKey: $0.verifyingKey, algorithm: algorithm, tls: tls) }
                    ?? DuoBench.memoryTarget(algorithm: algorithm, directory: directory)
                let direct = try await DuoBench.run(target, algorithm: algorithm, operations: options.operations, runs: options.runs,
                                                    warmup: options.warmup, transport: transport == "websocket" ? wsLabel : transport)
                results += direct
                if let rtt = options.rtt, let node {
                    FileHandle.standardError.write(Data("bench: duo \(name) over websocket at RTT \(rtt) ms…\n".utf8))
                    let proxy = try DelayProxy(upstreamPort: node.port, roundTripMilliseconds: rtt)
                    defer { proxy.stop() }
                    let delayed = try await DuoBench.run(
                        DuoBench.websocketTarget(port: proxy.port, cloudKey: node.verifyingKey, algorithm: algorithm, tls: tls),
                        algorithm: algorithm, operations: options.operations, runs: options.runs, warmup: options.warmup,
                        transport: wsLabel + "+rtt")
                    results += Self.roundTrips(delayed, against: direct, rtt: rtt)
                }
            }
        }
        if options.modes.contains("trio"), options.transports.contains("websocket") {
            try pinApp(true)
            let nodes = try TrioNodePair(tls: tls)
            if options.pin { nodes.nodeA.pin(toCPU: 1); nodes.nodeB.pin(toCPU: 1) }
            defer { nodes.stop() }
            for name in options.algorithms {
                FileHandle.standardError.write(Data("bench: trio \(name) over websocket (node processes A and B)…\n".utf8))
                let algorithm: Keyshare.Algorithm = name == "ecdsa" ? .ecdsa : .eddsa
                let direct = try await TrioBench.run(nodes: nodes, algorithm: algorithm, operations: options.operations,
                                                     runs: options.runs, warmup: options.warmup, transport: wsLabel)
                results += direct
                if let rtt = options.rtt {
                    FileHandle.standardError.write(Data("bench: trio \(name) over websocket at RTT \(rtt) ms (app ↔ A)…\n".utf8))
                    let proxy = try DelayProxy(upstreamPort: nodes.nodeA.port, roundTripMilliseconds: rtt)
                    defer { proxy.stop() }
                    let delayed = try await TrioBench.run(nodes: nodes, algorithm: algorithm, operations: options.operations,
                                                          runs: options.runs, warmup: options.warmup, entryPort: proxy.port,
                                                          transport: wsLabel + "+rtt")
                    results += Self.roundTrips(delayed, against: direct, rtt: rtt)
                }
            }
        }
        for index in results.indices where options.tls && results[index].transport.hasPrefix("wss") {
            results[index].tls = true
        }
        for index in results.indices {
            let baselineMs = (results[index].algorithm == "ecdsa" ? baselines.secp256k1 : baselines.ed25519) / 1000
            results[index].baselineRatio = results[index].sample.medianMs / baselineMs
        }
        var throughput: [Throughput.Result] = []
        // Throughput is the node's on the whole machine: never pinned.
        if !options.clients.isEmpty { try pinApp(false) }
        for clients in options.clients {
            FileHandle.standardError.write(Data("bench: throughput with \(clients) concurrent clients…\n".utf8))
            let node = try NodeProcess()   // a fresh process per run, so its peak RSS is this run's
            defer { node.stop() }
            throughput.append(try await Throughput.measure(node: node, clients: clients, seconds: options.seconds))
        }
        return BenchReport(results: results, throughput: throughput, secp256k1SignUs: baselines.secp256k1,
                           ed25519SignUs: baselines.ed25519, cores: ProcessInfo.processInfo.activeProcessorCount,
                           pinned: options.pin)
    }

    /// A duo node process whose token file grants the bench's token every duo scope (export included).
    static func duoNode(directory: String, tls: BenchTLS? = nil) throws -> NodeProcess {
        let tokenFile = directory + "/tokens"
        guard FileManager.default.createFile(atPath: tokenFile, contents: Data(
            (DuoBench.token + "\nscope: keygen reconcile refresh sign import export preSign preSignFinal\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw BenchError("cannot write the token file") }
        let nodeDirectory = NSTemporaryDirectory() + "silentshard-bench-node-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: nodeDirectory, withIntermediateDirectories: true)
        return try NodeProcess(directory: nodeDirectory, arguments: [
            "--auth", "token-file:" + tokenFile, "--generate-key", "--node-key", nodeDirectory + "/node.key",
            "--database", nodeDirectory + "/node.sqlite", "--master-key", nodeDirectory + "/master.key"] + (tls?.nodeArguments ?? []))
    }

    /// Medians of 201 single-party signatures in this process, microseconds.
    static func baselines() -> (secp256k1: Double, ed25519: Double) {
        func median(_ body: () -> Void) -> Double {
            for _ in 0..<20 { body() }
            var samples: [Double] = []
            for _ in 0..<201 {
                let start = ContinuousClock.now
                body()
                let elapsed = ContinuousClock.now - start
                samples.append(Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
            }
            return samples.sorted()[samples.count / 2]
        }
        let scalar = Secp256k1.Scalar.random()
        let hash = SecureRandom.bytes(count: 32)
        let ecdsa = median { _ = try? Secp256k1.ECDSA.sign(hash: hash, privateKey: scalar) }
        let key = Ed25519.SigningKey()
        let message = SecureRandom.bytes(count: 64)
        let eddsa = median { _ = key.signature(for: message) }
        return (ecdsa, eddsa)
    }
}
