import ChildProcesses
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("ChildProcess: posix_spawn instead of Foundation's Process", .timeLimit(.minutes(30)))
struct ChildProcessTests {
    static let shell = URL(fileURLWithPath: "/bin/sh")

    /// Runs `script` in /bin/sh; its stdout and the way it ended.
    static func run(_ script: String, environment: [String: String]? = nil) throws -> (String, ChildProcess.Termination?) {
        let output = Pipe()
        let process = try ChildProcess.run(shell, arguments: ["-c", script], environment: environment,
                                           standardOutput: .pipe(output), standardError: .null)
        let data = output.fileHandleForReading.readDataToEndOfFile()   // EOF: the parent closed its writing end
        #expect(process.waitForExit(timeout: 30))
        return (String(decoding: data, as: UTF8.self), process.termination)
    }

    @Test func exitCodeArgumentsAndOutput() throws {
        let (text, termination) = try Self.run("printf '%s|%s' \"$0\" hello; exit 7")
        #expect(text == "/bin/sh|hello")
        #expect(termination == .exit(7))
    }

    @Test func environmentReplacesOrInherits() throws {
        #expect(try Self.run("printf '%s' \"$ONLY\"", environment: ["ONLY": "this"]).0 == "this")
        #expect(try Self.run("printf '%s' \"${HOME-unset}\"", environment: ["ONLY": "this"]).0 == "unset")
        #expect(try Self.run("printf '%s' \"$PATH\"").0 == ProcessInfo.processInfo.environment["PATH"])
    }

    @Test func signalsAndGraceEnd() throws {
        let sleeper = try ChildProcess.run(Self.shell, arguments: ["-c", "sleep 30"], standardOutput: .null)
        #expect(sleeper.isRunning && sleeper.terminationStatus == -1)
        sleeper.terminate(grace: 5)
        #expect(sleeper.termination == .signal(SIGTERM))
        // A child that ignores SIGTERM is killed after the grace period.
        let stubborn = try ChildProcess.run(Self.shell, arguments: ["-c", "trap '' TERM; sleep 30"], standardOutput: .null)
        usleep(200_000)   // let the shell install its trap
        stubborn.terminate(grace: 0.5)
        #expect(stubborn.termination == .signal(SIGKILL))
    }

    /// The child gets descriptors 0–2 only: a descriptor this process opened without CLOEXEC does not leak.
    @Test func onlyStandardDescriptorsAreInherited() throws {
        let fd = open("/dev/null", O_RDONLY)   // no O_CLOEXEC
        #expect(fd > 2)
        defer { close(fd) }
        let (text, termination) = try Self.run("[ -e /proc/self/fd/\(fd) ] && echo leaked || echo closed")
        #expect(text == "closed\n")
        #expect(termination == .exit(0))
    }

    @Test func missingExecutableThrows() {
        #expect(throws: ChildProcessError.self) {
            _ = try ChildProcess.run(URL(fileURLWithPath: "/nonexistent/silentshard-no-such-binary"))
        }
    }
}
