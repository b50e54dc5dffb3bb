import Foundation

// `silentshard-bench primitives`: release-mode benchmarks (run via `scripts/bench`).
let arguments = CommandLine.arguments.dropFirst()
let suite = arguments.first ?? "primitives"

#if DEBUG
print("warning: this is a debug build; figures are meaningless. Use `swift run -c release silentshard-bench`.")
#endif

do {
    switch suite {
    case "primitives":
        print("# silentshard-bench primitives (medians of 15 samples, this machine: \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        try PrimitiveBenchmarks.run(harness: Harness())
    case "frost":
        print("# silentshard-bench frost (medians of 15 samples, this machine: \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        try FROSTBenchmarks.run(harness: Harness())
    default:
        FileHandle.standardError.write(Data("usage: silentshard-bench primitives | frost\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
    exit(1)
}
