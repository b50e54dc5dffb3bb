import ChildProcesses
import Foundation

/// A `silentshard node` child process for fault tests: started with extra environment (e.g. the
/// node's `SILENTSHARD_TEST_PAUSE` hook), its port read from its first stdout lines, killed with
/// SIGKILL (a crash: no shutdown path runs) and restarted on the same port and database.
public final class NodeProcess: @unchecked Sendable {
    package let process: ChildProcess
    public let port: Int
    /// Node B's peer listener (`--peer-listen`), if it has one.
    public let peerPort: Int?
    /// The node's verifying key (hex), from its startup lines.
    public let verifyingKey: String

    private init(process: ChildProcess, port: Int, peerPort: Int?, verifyingKey: String) {
        self.process = process
        self.port = port
        self.peerPort = peerPort
        self.verifyingKey = verifyingKey
    }

    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    /// `.build/debug/silentshard` of this checkout.
    public static var binary: URL { PythonPeer.repositoryRoot.appendingPathComponent(".build/debug/silentshard") }

    /// Starts `silentshard node --listen 127.0.0.1:<port or 0> <arguments>` with `environment` added
    /// to this process's, and waits (off the cooperative pool) for its "listening" line. `logPath`:
    /// where its stderr (the node log) goes (default: discarded).
    public static func start(arguments: [String], port: Int = 0, environment: [String: String] = [:],
                             logPath: String? = nil) async throws -> NodeProcess {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result {
                    try startBlocking(arguments: arguments, port: port, environment: environment, logPath: logPath)
                })
            }
            thread.start()
        }
    }

    private static func startBlocking(arguments: [String], port: Int, environment: [String: String],
                                      logPath: String?) throws -> NodeProcess {
        let output = Pipe()
        var log = ChildProcess.Stream.null
        if let logPath, FileManager.default.createFile(atPath: logPath, contents: nil),
           let handle = FileHandle(forWritingAtPath: logPath) {
            log = .file(handle)
        }
        let process = try ChildProcess.run(binary, arguments: ["node", "--listen", "127.0.0.1:\(port)"] + arguments,
                                           environment: ProcessInfo.processInfo.environment.merging(environment) { $1 },
                                           standardOutput: .pipe(output), standardError: log)
        let reader = output.fileHandleForReading
        var text = ""
        while !text.contains("verifying key") {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let lines = text.split(separator: "\n")
        guard let port = lines.first(where: { $0.hasPrefix("silentshard node listening on port ") })
                .flatMap({ Int($0.split(separator: " ").last ?? "") }),
              let key = lines.first(where: { $0.hasPrefix("node verifying key") })?.split(separator: " ").last
        else {
            process.terminate()
            throw StartFailure(description: "node did not start: \(text)")
        }
        let peerPort = lines.first(where: { $0.hasPrefix("silentshard node peer link listening on port ") })
            .flatMap { Int($0.split(separator: " ").last ?? "") }
        return NodeProcess(process: process, port: port, peerPort: peerPort, verifyingKey: String(key))
    }

    /// SIGKILL, then waits for the exit.
    public func kill() async {
        let process = self.process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                process.kill()
                process.waitForExit(timeout: 30)
                continuation.resume()
            }
            thread.start()
        }
    }

    /// Waits (polling, on the caller's task) until `path` exists; false after `timeout` seconds.
    public static func waitForFile(_ path: String, timeout: TimeInterval = 300) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !FileManager.default.fileExists(atPath: path) {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    deinit {
        process.kill()
    }
}
