import ChildProcesses
import Foundation
import MPCCrypto
import SilentShardTestSupport
import Testing

/// Proposal P5 with real processes: two `silentshard-test-limits` processes (a node's rate limiter each,
/// over one shared SQLite file or PostgreSQL database), driven line by line. Every command carries the
/// time both processes' clocks read, so no window depends on how fast the machine is.
@Suite("session.md §9.5 rate limits across two node processes on one database (P5)", .serialized, .timeLimit(.minutes(30)))
struct ClusterRateLimitProcessTests {
    static let binary = PythonPeer.repositoryRoot.appendingPathComponent(".build/debug/silentshard-test-limits")
    static let start: UInt64 = 1_800_000_000_000

    /// One child process and its command pipe (`ClusterRateLimitProcessTests.NotStarted` if it does not answer `ready`).
    final class LimiterProcess {
        let process: ChildProcess
        let input = Pipe()
        let output = Pipe()
        private var buffered = ""

        init(database: String, masterKey: String, limits: String) throws {
            process = try ChildProcess.run(ClusterRateLimitProcessTests.binary,
                                           arguments: ["--database", database, "--master-key", masterKey, "--rate-limits", limits],
                                           standardInput: .pipe(input), standardOutput: .pipe(output), standardError: .null)
            let first = readLine()
            guard first == "ready" else { throw NotStarted(description: "limiter process did not start: \(first ?? "no output")") }
        }

        /// Sends one command line (without waiting for its answer).
        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

        /// The next answer line (nil at end of output).
        func readLine() -> String? {
            while !buffered.contains("\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { return nil }
                buffered += String(decoding: chunk, as: UTF8.self)
            }
            let line = buffered.prefix { $0 != "\n" }
            buffered.removeFirst(line.count + 1)
            return String(line)
        }

        func ask(_ line: String) -> String? {
            send(line)
            return readLine()
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            if !process.waitForExit(timeout: 30) { process.kill() }
        }
    }

    /// The child did not start.
    struct NotStarted: Error, CustomStringConvertible {
        let description: String
    }

    @Test("a limit of 5 failed device signatures is not exceeded when they alternate between two processes; key creations racing from both are admitted the limit's number of times; an address block reaches both",
          arguments: ClusterDatabase.allCases)
    func limitsAcrossProcesses(_ database: ClusterDatabase) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary.path), "build the silentshard-test-limits product first")
        let location = try database.scratch()
        let masterKey = Hex.encode(SecureRandom.bytes(count: 32))
        let limits = "device-failures-per-minute=5,key-creations-per-hour=10,auth-failures-per-minute=4"
        let processes = try (0..<2).map { _ in try LimiterProcess(database: location, masterKey: masterKey, limits: limits) }
        defer { for process in processes { process.stop() } }
        let device = Hex.encode([1] + [UInt8](repeating: 0x5A, count: 32))

        // Failed device signatures of X with Y's device key, alternating: 4 leave X allowed everywhere.
        for index in 0..<4 {
            #expect(processes[index % 2].ask("device-failed X \(device) \(Self.start + UInt64(index) * 1000)") == "ok")
        }
        let now = Self.start + 4000
        for process in processes { #expect(process.ask("device-check X \(device) \(now)") == "allowed") }
        // The 5th in total (the 3rd in process 0) limits X in both processes, for the rest of the minute.
        #expect(processes[0].ask("device-failed X \(device) \(now)") == "ok")
        for process in processes {
            #expect(process.ask("device-check X \(device) \(now)") == "limited 56")
            #expect(process.ask("device-check Y \(device) \(now)") == "allowed")
        }
        #expect(processes[1].ask("device-check X \(device) \(Self.start + 60_000)") == "allowed")

        // Key creations: both processes try 10 at the same moment; 10 are admitted in total.
        for process in processes { process.send("key-creations alice \(now) 10") }
        let admitted = processes.map { process -> Int in
            guard let line = process.readLine(), line.hasPrefix("allowed "), let count = Int(line.dropFirst("allowed ".count)) else { return -1 }
            return count
        }
        #expect(admitted.allSatisfy { $0 >= 0 } && admitted.reduce(0, +) == 10, "\(admitted)")

        // Failed authentications from one address, alternating: the 4th blocks it in both.
        for index in 0..<4 { #expect(processes[index % 2].ask("auth-failed 203.0.113.5 \(now)") == "ok") }
        for process in processes { #expect(process.ask("address-check 203.0.113.5 \(now)") == "limited 600") }
        #expect(processes[0].ask("address-check 203.0.113.6 \(now)") == "allowed")
    }
}
