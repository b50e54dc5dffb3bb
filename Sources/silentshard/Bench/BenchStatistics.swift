import Foundation

/// Summary of one operation's timed runs (milliseconds).
struct BenchSample: Sendable {
    var runs: Int
    var medianMs: Double
    var p95Ms: Double
    var minMs: Double

    /// Median, 95th percentile (nearest rank) and minimum of `milliseconds` (not empty).
    init(_ milliseconds: [Double]) {
        let sorted = milliseconds.sorted()
        runs = sorted.count
        minMs = sorted.first ?? 0
        if sorted.isEmpty {
            medianMs = 0
            p95Ms = 0
        } else {
            medianMs = sorted.count % 2 == 1 ? sorted[sorted.count / 2]
                : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
            let rank = Int((0.95 * Double(sorted.count)).rounded(.up))
            p95Ms = sorted[max(0, min(sorted.count - 1, rank - 1))]
        }
    }
}

/// Wall time of `body` in milliseconds.
func milliseconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
}
