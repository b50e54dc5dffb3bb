/// Issue 9's performance goals (end to end on loopback, this 2-core machine, medians).
enum BenchGoals {
    /// Median-time goals in milliseconds, by mode, algorithm and operation ("*" matches any algorithm).
    static let medianMs: [(mode: String, algorithm: String, operation: String, ms: Double)] = [
        ("duo", "ecdsa", "sign", 8), ("duo", "ecdsa", "keygen", 100), ("trio", "ecdsa", "keygen", 200),
        ("trio", "*", "preSignFinal", 2), ("duo", "eddsa", "sign", 2),
    ]
    /// Bytes sent per party per ECDSA signature.
    static let ecdsaSignBytes = 60_000
    /// ECDSA duo signatures per second per node.
    static let signsPerSecond = 150.0

    static func medianGoal(mode: String, algorithm: String, operation: String) -> Double? {
        medianMs.first { $0.mode == mode && ($0.algorithm == "*" || $0.algorithm == algorithm) && $0.operation == operation }?.ms
    }
}
