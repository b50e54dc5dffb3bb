import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore

/// `silentshard load`: a load driver for a node or a cluster behind a load balancer. Runs `--sessions`
/// simulated apps, `--clients` at a time; each is a duo keygen then a sign whose signature is verified,
/// each operation retried when it fails. Reports sessions/s, first-try failures and retries; then,
/// optionally, checks every key made: it signs through each `--check-nodes` URL, and the node
/// database holds exactly those keys at the apps' generations (`--check-store`).
enum LoadCommand {
    static let usage = """
        usage: silentshard load --node URL --cloud-key HEX [options]

          --node URL               ws://HOST:PORT (or wss://) of a node or of the load balancer in front of a cluster
          --cloud-key HEX          the node key the apps pin (64 hex; `silentshard node` prints it)
          --sessions N             apps, each keygen + sign (default 200)
          --clients N              apps running at once (default 32)
          --algorithm ecdsa|eddsa  default ecdsa
          --attempts N             tries per operation, the first included (default 6)
          --token TOKEN            app token sent on every step (nodes started with --auth none need none)
          --check-nodes URL,URL    after the run, sign once with every key through each URL (no retry)
          --check-store DATABASE   after the run, the node database holds exactly the keys made, at the
          --master-key PATH          apps' generations, and no presignatures for them (duo has none)
          --json FILE              the report as JSON
          --quiet                  no progress lines

        Exit status 0 when every session succeeded (possibly on a retry) and every check passed.
        """

    struct Options: Sendable {
        var node = ""
        var cloudKey = ""
        var sessions = 200
        var clients = 32
        var algorithm = Keyshare.Algorithm.ecdsa
        var attempts = 6
        var token: String?
        var checkNodes: [String] = []
        var checkStore: String?
        var masterKey: String?
        var json: String?
        var quiet = false
    }

    static func main(_ arguments: [String]) async -> Int32 {
        let options: Options
        do {
            guard let parsed = try parse(arguments) else {
                print(usage)
                return 0
            }
            options = parsed
        } catch {
            FileHandle.standardError.write(Data("silentshard load: \(error)\n\n\(usage)\n".utf8))
            return 2
        }
        #if DEBUG
        log("warning: debug build; sessions/s are far below a release build's (swift build -c release)")
        #endif
        let total = options.sessions
        var progress: (@Sendable (Int) -> Void)?
        if !options.quiet {
            progress = { done in LoadCommand.log("load: \(done)/\(total) sessions done") }
        }
        let run = await LoadRun.run(options, progress: progress)
        var report = LoadReport(options: options, run: run)
        if !options.checkNodes.isEmpty {
            report.nodeChecks = await LoadChecks.signThrough(options.checkNodes, run: run, clients: options.clients)
        }
        if let database = options.checkStore, let masterKeyPath = options.masterKey {
            report.storeCheck = LoadChecks.store(database: database, masterKeyPath: masterKeyPath, run: run)
        }
        print(report.text)
        if let path = options.json {
            do { try Data((report.json.serialized + "\n").utf8).write(to: URL(fileURLWithPath: path)) } catch {
                log("silentshard load: cannot write \(path): \(error)")
                return 1
            }
        }
        return report.passed ? 0 : 1
    }

    static func parse(_ arguments: [String]) throws -> Options? {
        var options = Options()
        var iterator = arguments.makeIterator()
        func value(_ flag: String) throws -> String {
            guard let value = iterator.next() else { throw NodeCommand.Failure("\(flag) needs a value") }
            return value
        }
        func count(_ flag: String, minimum: Int = 1) throws -> Int {
            guard let number = Int(try value(flag)), number >= minimum else { throw NodeCommand.Failure("\(flag) must be an integer ≥ \(minimum)") }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--help", "-h": return nil
            case "--node": options.node = try value(argument)
            case "--cloud-key": options.cloudKey = try value(argument)
            case "--sessions": options.sessions = try count(argument)
            case "--clients": options.clients = try count(argument)
            case "--attempts": options.attempts = try count(argument)
            case "--algorithm":
                switch try value(argument) {
                case "ecdsa": options.algorithm = .ecdsa
                case "eddsa": options.algorithm = .eddsa
                default: throw NodeCommand.Failure("--algorithm: ecdsa or eddsa")
                }
            case "--token": options.token = try value(argument)
            case "--check-nodes": options.checkNodes = try value(argument).split(separator: ",").map(String.init)
            case "--check-store": options.checkStore = try value(argument)
            case "--master-key": options.masterKey = try value(argument)
            case "--json": options.json = try value(argument)
            case "--quiet": options.quiet = true
            default: throw NodeCommand.Failure("unknown option \(argument)")
            }
        }
        for url in [options.node] + options.checkNodes where !(url.hasPrefix("ws://") || url.hasPrefix("wss://")) {
            throw NodeCommand.Failure("node URLs are ws://HOST:PORT or wss://HOST:PORT (got '\(url)')")
        }
        guard options.cloudKey.utf8.count == 64, (try? Hex.decode(options.cloudKey)) != nil else {
            throw NodeCommand.Failure("--cloud-key must be 64 hex characters")
        }
        guard (options.checkStore == nil) == (options.masterKey == nil) else {
            throw NodeCommand.Failure("--check-store and --master-key go together")
        }
        return options
    }

    static func log(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// The timed part: `clients` workers take sessions off a shared counter until all have run.
enum LoadRun {
    struct Result: Sendable {
        var outcomes: [LoadSession.Outcome]
        var sessions: [LoadSession]
        var seconds: Double
    }

    static func run(_ options: LoadCommand.Options, progress: (@Sendable (Int) -> Void)?) async -> Result {
        let sessions = (0..<options.sessions).map { _ in
            LoadSession(algorithm: options.algorithm, cloudKey: options.cloudKey, token: options.token)
        }
        let next = LoadCounter(), done = LoadCounter()
        let start = ContinuousClock.now
        let collected = await withTaskGroup(of: [(Int, LoadSession.Outcome)].self) { group in
            for _ in 0..<min(options.clients, options.sessions) {
                group.addTask {
                    var results: [(Int, LoadSession.Outcome)] = []
                    while true {
                        let index = next.take()
                        guard index < sessions.count else { return results }
                        results.append((index, await sessions[index].run(url: options.node, attempts: options.attempts)))
                        let finished = done.take() + 1
                        if finished % 10 == 0 || finished == sessions.count { progress?(finished) }
                    }
                }
            }
            var all: [(Int, LoadSession.Outcome)] = []
            for await part in group { all += part }
            return all
        }
        let elapsed = ContinuousClock.now - start
        var outcomes = Array(repeating: LoadSession.Outcome(), count: sessions.count)
        for (index, outcome) in collected { outcomes[index] = outcome }
        return Result(outcomes: outcomes, sessions: sessions,
                      seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
}

/// A shared counter: `take()` returns 0, 1, 2, … across tasks.
final class LoadCounter: Sendable {
    private let value = LockedValue(0)

    func take() -> Int {
        value.withLock { value in
            defer { value += 1 }
            return value
        }
    }
}
