import Foundation
import MPCCrypto
#if canImport(Glibc)
internal import CSpawnShims
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process started with `posix_spawn`, which the test support, the tests and the CLI's bench
/// use instead of Foundation's `Process`: on Linux (Swift 6.3.1) `Process.run()` can crash the parent
/// with SIGSEGV — it copies the whole 256-byte `d_name` of every `/proc/self/fd` entry and reads past
/// glibc's readdir buffer when the next page is unmapped (swiftlang/swift-corelibs-foundation#5472).
///
/// Like `Process`, the child runs in its own process group and gets only descriptors 0–2. Nothing
/// reaps it in the background: ``isRunning``, ``waitForExit(timeout:)`` and ``termination`` do.
package final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream {
        /// This process's own stream.
        case inherit
        /// `/dev/null`.
        case null
        /// An open file.
        case file(FileHandle)
        /// The child's end of a pipe (reading end for input, writing end for output); this process
        /// closes its copy of that end once the child runs.
        case pipe(Pipe)
    }

    /// How the child ended.
    package enum Termination: Equatable, Sendable {
        case exit(Int32)
        case signal(Int32)
    }

    package let processIdentifier: Int32  // pid_t
    private let ended = LockedValue<Termination?>(nil)

    private init(processIdentifier: pid_t) {
        self.processIdentifier = processIdentifier
    }

    /// Starts `executable` with `arguments` (not including the program name) in `environment`
    /// (nil: this process's).
    package static func run(_ executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
                            standardInput: Stream = .inherit, standardOutput: Stream = .inherit,
                            standardError: Stream = .inherit) throws(ChildProcessError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        guard posix_spawn_file_actions_init(&actions) == 0 else { throw ChildProcessError("posix_spawn_file_actions_init failed") }
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        guard posix_spawnattr_init(&attributes) == 0 else { throw ChildProcessError("posix_spawnattr_init failed") }
        defer { posix_spawnattr_destroy(&attributes) }

        var flags = Int32(POSIX_SPAWN_SETPGROUP)   // process group 0: its own
        let streams: [(Stream, Int32)] = [(standardInput, 0), (standardOutput, 1), (standardError, 2)]
        for (stream, target) in streams {
            let result: Int32
            switch stream {
            case .inherit: continue
            case .null: result = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let handle): result = posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target)
            case .pipe(let pipe):
                let end = target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                result = posix_spawn_file_actions_adddup2(&actions, end.fileDescriptor, target)
            }
            guard result == 0 else { throw ChildProcessError("redirecting descriptor \(target): \(String(cString: strerror(result)))") }
        }
        #if canImport(Glibc)
        guard silentshard_spawn_close_from(&actions, 3) == 0 else { throw ChildProcessError("posix_spawn_file_actions_addclosefrom_np failed") }
        #else
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #endif
        guard posix_spawnattr_setflags(&attributes, Int16(flags)) == 0 else { throw ChildProcessError("posix_spawnattr_setflags failed") }

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }

        var pid = pid_t()
        let result = executable.path.withCString { path in
            if let envp { return posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
            return posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        }
        for (stream, target) in streams {
            if case .pipe(let pipe) = stream { try? (target == 0 ? pipe.fileHandleForReading : pipe.fileHandleForWriting).close() }
        }
        guard result == 0 else { throw ChildProcessError("\(executable.path): \(String(cString: strerror(result)))") }
        return ChildProcess(processIdentifier: pid)
    }

    /// How the child ended; nil while it runs.
    package var termination: Termination? {
        ended.withLock { ended in
            if let ended { return ended }
            var status: Int32 = 0
            guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return nil }
            // <sys/wait.h>: low 7 bits 0 = exited (code in bits 8–15), else the terminating signal.
            let signal = status & 0x7F
            ended = signal == 0 ? .exit((status >> 8) & 0xFF) : .signal(signal)
            return ended
        }
    }

    package var isRunning: Bool { termination == nil }

    /// The exit code, or the signal that ended the child (-1 while it runs).
    package var terminationStatus: Int32 {
        switch termination {
        case .exit(let code)?, .signal(let code)?: return code
        case nil: return -1
        }
    }

    /// SIGTERM.
    package func terminate() { send(SIGTERM) }

    /// SIGKILL.
    package func kill() { send(SIGKILL) }

    private func send(_ signal: Int32) {
        if isRunning { sendSignal(signal, to: processIdentifier) }
    }

    /// Waits for the child to exit, at most `timeout` seconds; then SIGKILL and false. Blocks the
    /// caller (polls every 10 ms).
    @discardableResult
    package func waitForExit(timeout: TimeInterval = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline {
                kill()
                while isRunning { usleep(10_000) }
                return false
            }
            usleep(10_000)
        }
        return true
    }

    /// SIGTERM, then waits up to `grace` seconds for the child to exit and SIGKILLs it if it has not:
    /// nothing is left behind, whatever the child does with SIGTERM. Blocks the caller.
    package func terminate(grace: TimeInterval) {
        guard isRunning else { return }
        terminate()
        waitForExit(timeout: grace)
    }

    deinit {
        _ = termination   // reaps a child that has exited (no zombie); a running one is the owner's to stop
    }
}

private func sendSignal(_ signal: Int32, to process: pid_t) {
    _ = kill(process, signal)
}

/// Why a child process could not be started.
package struct ChildProcessError: Error, CustomStringConvertible {
    package let description: String
    init(_ description: String) { self.description = description }
}
