import Foundation
import MPCCrypto

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
    case "dkls":
        print("# silentshard-bench dkls (medians of 21 runs, this machine: \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        try DKLsBenchmarks.run(harness: Harness())
    case "dkls-lifecycle":
        print("# silentshard-bench dkls-lifecycle (medians of 21 samples, this machine: \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        try DKLsLifecycleBenchmarks.run(harness: Harness())
    case "dkls-sign-loop":
        // For profilers (perf record) and CPU-time measurements: N (default 100) two-party signatures after
        // one keygen, nothing else. CPU per signature = (CPU(N2) − CPU(N1)) / (N2 − N1) removes keygen and start-up.
        var rng = SecureRandom()
        let count = arguments.dropFirst().first.flatMap { Int($0) } ?? 100
        let duo = try DKLsBenchmarks.keygen(n: 2, t: 2, using: &rng)
        for _ in 0..<count { blackHole(try DKLsBenchmarks.sign(duo, hash: [UInt8](repeating: 7, count: 32), using: &rng)) }
    case "dkls-dkg-loop":
        // For CPU-time measurements (`/usr/bin/time`) and profilers: 10 three-party DKGs (2-of-3), all
        // parties in this process, OT loops serial (ChunkedParallelism.width 1).
        var rng = SecureRandom()
        for _ in 0..<10 { blackHole(try DKLsBenchmarks.keygen(n: 3, t: 2, using: &rng)) }
    case "frost":
        print("# silentshard-bench frost (medians of 15 samples, this machine: \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        try FROSTBenchmarks.run(harness: Harness())
    default:
        FileHandle.standardError.write(Data("usage: silentshard-bench primitives | dkls | dkls-lifecycle | dkls-sign-loop [N] | dkls-dkg-loop | frost\n".utf8))
        exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("benchmark failed: \(error)\n".utf8))
    exit(1)
}
