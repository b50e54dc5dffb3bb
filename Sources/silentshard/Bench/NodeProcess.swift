import ChildProcesses
import Foundation

/// A `silentshard node` child process on a loopback port with a temporary database (for the bench:
/// the node runs in its own process, as in production, so its CPU time and memory can be read).
final class NodeProcess: @unchecked Sendable {
    let port: Int
    /// Node B's peer listener (`--peer-listen`), if it has one.
    let peerPort: Int?
    let verifyingKey: String
    let directory: String
    private let process: ChildProcess

    /// Starts `silentshard node` (this executable) with `--auth none` and a fresh key, database and
    /// master key in a temporary directory; returns once it printed its port and key.
    convenience init(extraArguments: [String] = [], environment: [String: String] = [:]) throws {
        let directory = NSTemporaryDirectory() + "silentshard-bench-node-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try self.init(directory: directory, arguments: ["--auth", "none", "--generate-key", "--node-key", directory + "/node.key",
                                                        "--database", directory + "/node.sqlite",
                                                        "--master-key", directory + "/master.key"] + extraArguments,
                      environment: environment)
    }

    /// Starts `silentshard node --listen 127.0.0.1:0 --rate-limits off` (a benchmark makes hundreds of keys
    /// from one address and principal) with `arguments` (which include `--auth`);
    /// `directory` is removed by `stop()`.
    init(directory: String, arguments: [String], environment: [String: String] = [:]) throws {
        self.directory = directory
        var env = ProcessInfo.processInfo.environment
        for (name, value) in environment { env[name] = value }
        let output = Pipe()
        process = try ChildProcess.run(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
                                       arguments: ["node", "--listen", "127.0.0.1:0", "--rate-limits", "off"] + arguments, environment: env,
                                       standardOutput: .pipe(output), standardError: .null)
        var text = ""
        var port: Int?
        var peerPort: Int?
        var key: String?
        let handle = output.fileHandleForReading
        while port == nil || key == nil {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { break }
            text += String(decoding: chunk, as: UTF8.self)
            for line in text.split(separator: "\n") {
                if line.hasPrefix("silentshard node listening on port "), let value = Int(line.split(separator: " ").last ?? "") {
                    port = value
                }
                if line.hasPrefix("silentshard node peer link listening on port "), let value = Int(line.split(separator: " ").last ?? "") {
                    peerPort = value
                }
                if line.hasPrefix("node verifying key (Ed25519): ") { key = String(line.split(separator: " ").last ?? "") }
            }
        }
        guard let port, let key else {
            process.terminate()
            throw BenchError("the node did not start")
        }
        self.port = port
        self.peerPort = peerPort
        verifyingKey = key
    }

    /// Runs every thread of the node on `cpu` from now on (`bench --pin`).
    @discardableResult
    func pin(toCPU cpu: Int) -> Bool { CPUPinning.pin(process: process.processIdentifier, toCPU: cpu) }

    /// Peak resident set size (VmHWM) in MiB, from /proc.
    var peakRSSMiB: Double? {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }

    /// CPU seconds (user + system) the node has used so far, from /proc.
    var cpuSeconds: Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3 (index 0 here); utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        process.terminate()
        process.waitForExit(timeout: 10)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
