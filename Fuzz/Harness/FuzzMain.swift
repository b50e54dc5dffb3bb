// The libFuzzer harness for every SilentShard decoder of outside bytes (docs: Fuzz/README.md).
//
// One executable, one target per run: `SILENTSHARD_FUZZ_TARGET=<name> silentshard-fuzz [libFuzzer flags] DIR`.
// Built for fuzzing by scripts/fuzz (`-D FUZZING`, ASan + SanitizerCoverage, libFuzzer without its
// own main). In the normal package build the same targets compile without libFuzzer, and the binary
// offers `list`, `write-seeds DIR` and `replay TARGET FILE…` (runs inputs through a target: crash
// reproduction and corpus checks without the fuzzing build).
import Foundation

#if FUZZING
/// libFuzzer's driver entry (compiler-rt `libclang_rt.fuzzer_no_main`): parses the flags, runs `callback`.
@_extern(c, "LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target libFuzzer drives (set once, before the driver starts).
nonisolated(unsafe) private var selectedTarget: FuzzTarget?
#endif

@main
enum FuzzMain {
    static func main() {
        let arguments = CommandLine.arguments
        switch arguments.dropFirst().first {
        case "list":
            for target in FuzzTargets.all { print("\(target.name)\t\(target.summary)") }
            return
        case "write-seeds" where arguments.count == 3:
            writeSeeds(to: URL(fileURLWithPath: arguments[2]))
            return
        case "replay" where arguments.count >= 3:
            replay(target: arguments[2], files: Array(arguments.dropFirst(3)))
            return
        default:
            break
        }
        #if FUZZING
        guard let name = ProcessInfo.processInfo.environment["SILENTSHARD_FUZZ_TARGET"],
              let target = FuzzTargets.named(name) else {
            fail("set SILENTSHARD_FUZZ_TARGET to one of: \(FuzzTargets.all.map(\.name).joined(separator: " "))")
        }
        selectedTarget = target
        target.prepare()
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            guard let target = selectedTarget else { return 0 }
            target.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
        #else
        fail("usage: silentshard-fuzz list | write-seeds DIR | replay TARGET FILE…  (fuzzing: scripts/fuzz)")
        #endif
    }

    /// `DIR/<target>/seed-NN` for every target's seeds (scripts/fuzz --write-seeds; committed under Fuzz/corpus).
    static func writeSeeds(to directory: URL) {
        for target in FuzzTargets.all {
            let folder = directory.appendingPathComponent(target.name)
            let seeds = target.seeds()
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for (index, seed) in seeds.enumerated() {
                    // Each seed must pass through the target (and its checks) before it is written.
                    target.run(seed)
                    let name = String(format: "seed-%02d", index)
                    try Data(seed).write(to: folder.appendingPathComponent(name))
                }
            } catch {
                fail("cannot write seeds for \(target.name): \(error)")
            }
            print("\(target.name): \(seeds.count) seeds, \(acceptedInputs.exchange(0, ordering: .relaxed)) accepted")
        }
    }

    /// Runs every file (or every file in a directory) through one target.
    static func replay(target name: String, files: [String]) {
        guard let target = FuzzTargets.named(name) else { fail("unknown target \(name)") }
        var paths: [String] = []
        for file in files {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory), isDirectory.boolValue {
                let entries = (try? FileManager.default.contentsOfDirectory(atPath: file)) ?? []
                paths += entries.sorted().map { file + "/" + $0 }
            } else {
                paths.append(file)
            }
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)") }
            target.run([UInt8](data))
        }
        print("\(name): \(paths.count) inputs, \(acceptedInputs.load(ordering: .relaxed)) accepted, no findings")
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(2)
    }
}
