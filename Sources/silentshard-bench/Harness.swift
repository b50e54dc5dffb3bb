import Foundation

/// A minimal benchmark harness: runs a body in timed samples and reports the median.
struct Harness {
    struct Result {
        let name: String
        let nanosecondsPerOperation: Double
        let bytesPerOperation: Int?

        var operationsPerSecond: Double { 1e9 / nanosecondsPerOperation }
        var megabytesPerSecond: Double? {
            bytesPerOperation.map { Double($0) / nanosecondsPerOperation * 1e9 / 1_048_576 }
        }
    }

    /// Samples per measurement; the median is reported.
    var samples = 15
    /// Target duration of one sample.
    var sampleNanoseconds: UInt64 = 40_000_000

    /// Measures `body` (one operation per call). `bytes` makes the report a throughput.
    func measure(_ name: String, bytes: Int? = nil, _ body: () -> Void) -> Result {
        // Calibrate: how many calls fill one sample.
        var iterations = 1
        while true {
            let elapsed = time(iterations, body)
            if elapsed >= sampleNanoseconds / 4 || iterations >= 1 << 24 {
                iterations = max(1, Int(Double(iterations) * Double(sampleNanoseconds) / Double(max(elapsed, 1))))
                break
            }
            iterations *= 4
        }
        var perOperation: [Double] = []
        for _ in 0..<samples {
            perOperation.append(Double(time(iterations, body)) / Double(iterations))
        }
        perOperation.sort()
        return Result(name: name, nanosecondsPerOperation: perOperation[perOperation.count / 2], bytesPerOperation: bytes)
    }

    /// Times `runs` single calls of `body(k)` (for operations that consume their input, such as a
    /// presignature's finish) and reports the median.
    func measureEach(_ name: String, runs: Int, _ body: (Int) -> Void) -> Result {
        var times: [Double] = []
        for k in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            body(k)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start))
        }
        times.sort()
        return Result(name: name, nanosecondsPerOperation: times[times.count / 2], bytesPerOperation: nil)
    }

    private func time(_ iterations: Int, _ body: () -> Void) -> UInt64 {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { body() }
        return DispatchTime.now().uptimeNanoseconds - start
    }
}

/// Keeps a value alive so the optimiser cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

/// Prints results as a table, with an optional ratio column against a named baseline.
func printTable(_ title: String, _ results: [Harness.Result], baselines: [String: String] = [:]) {
    print("\n## \(title)\n")
    print("| operation | median time | rate | vs baseline |")
    print("|---|---:|---:|---|")
    let byName = Dictionary(results.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    for result in results {
        let time = formatDuration(result.nanosecondsPerOperation)
        let rate = result.megabytesPerSecond.map { String(format: "%.0f MB/s", $0) }
            ?? String(format: "%.0f ops/s", result.operationsPerSecond)
        var ratio = ""
        if let baselineName = baselines[result.name], let baseline = byName[baselineName] {
            ratio = String(format: "%.2f× the time of %@", result.nanosecondsPerOperation / baseline.nanosecondsPerOperation, baselineName)
        }
        print("| \(result.name) | \(time) | \(rate) | \(ratio) |")
    }
}

func formatDuration(_ nanoseconds: Double) -> String {
    switch nanoseconds {
    case ..<1_000: return String(format: "%.1f ns", nanoseconds)
    case ..<1_000_000: return String(format: "%.2f µs", nanoseconds / 1_000)
    default: return String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}
