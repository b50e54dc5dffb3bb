import Foundation

/// The load driver's summary, as text and JSON (no secrets: key ids are public).
struct LoadReport {
    let options: LoadCommand.Options
    let run: LoadRun.Result
    var nodeChecks: [LoadChecks.NodeCheck] = []
    var storeCheck: LoadChecks.StoreCheck?

    init(options: LoadCommand.Options, run: LoadRun.Result) {
        self.options = options
        self.run = run
    }

    var completed: Int { run.outcomes.filter { $0.signed }.count }
    var keygens: Int { run.outcomes.filter { $0.keyshare != nil }.count }
    var failed: Int { run.outcomes.count - completed }
    var firstTryFailures: Int { run.outcomes.filter(\.firstTryFailed).count }
    var retries: Int { run.outcomes.reduce(0) { $0 + $1.retries } }
    var reconciled: Int { run.outcomes.reduce(0) { $0 + $1.reconciled } }
    var badSignatures: Int { run.outcomes.filter(\.badSignature).count }
    var sessionsPerSecond: Double { run.seconds > 0 ? Double(completed) / run.seconds : 0 }

    var passed: Bool {
        failed == 0 && badSignatures == 0 && nodeChecks.allSatisfy(\.passed) && (storeCheck?.passed ?? true)
    }

    var text: String {
        let algorithm = options.algorithm == .ecdsa ? "ECDSA" : "EdDSA"
        var lines = [
            "load: \(options.sessions) sessions (duo \(algorithm) keygen + sign), \(options.clients) clients, \(options.node)",
            "  completed \(completed) in \(String(format: "%.1f", run.seconds)) s: \(String(format: "%.2f", sessionsPerSecond)) sessions/s",
            "  failed on the first try \(firstTryFailures), retries \(retries), in-doubt keygens settled by reconcile \(reconciled), "
                + "failed after \(options.attempts) tries \(failed), signatures not verifying \(badSignatures)",
        ]
        for outcome in run.outcomes.lazy.compactMap(\.failure).prefix(5) { lines.append("    failure: \(outcome)") }
        for check in nodeChecks {
            lines.append("  check \(check.url): \(check.signed)/\(check.keys) keys signed and verified \(check.passed ? "ok" : "FAILED")")
            for failure in check.failures { lines.append("    \(failure)") }
        }
        if let store = storeCheck {
            if let error = store.error {
                lines.append("  check store: FAILED (\(error))")
            } else {
                lines.append("  check store: \(store.keysStored) keys at the node for \(store.keysMade) keygens, "
                             + "\(store.generationMismatches) generation mismatches, \(store.presignatures) presignatures "
                             + "\(store.passed ? "ok" : "FAILED")")
            }
        }
        lines.append(passed ? "load: PASS" : "load: FAIL")
        return lines.joined(separator: "\n")
    }

    var json: JSONValue {
        var object: [String: JSONValue] = [
            "node": .string(options.node), "algorithm": .string(options.algorithm == .ecdsa ? "ecdsa" : "eddsa"),
            "sessions": .number(Double(options.sessions)), "clients": .number(Double(options.clients)),
            "attempts": .number(Double(options.attempts)),
            "completed": .number(Double(completed)), "keygens": .number(Double(keygens)), "failed": .number(Double(failed)),
            "firstTryFailures": .number(Double(firstTryFailures)), "retries": .number(Double(retries)),
            "reconciled": .number(Double(reconciled)), "badSignatures": .number(Double(badSignatures)),
            "seconds": .number(run.seconds), "sessionsPerSecond": .number(sessionsPerSecond), "passed": .bool(passed),
        ]
        object["nodeChecks"] = .array(nodeChecks.map { check in
            .object(["url": .string(check.url), "keys": .number(Double(check.keys)), "signed": .number(Double(check.signed)),
                     "passed": .bool(check.passed), "failures": .array(check.failures.map(JSONValue.string))])
        })
        if let store = storeCheck {
            object["storeCheck"] = .object([
                "keysMade": .number(Double(store.keysMade)), "keysStored": .number(Double(store.keysStored)),
                "generationMismatches": .number(Double(store.generationMismatches)),
                "presignatures": .number(Double(store.presignatures)), "passed": .bool(store.passed),
                "error": store.error.map(JSONValue.string) ?? .null,
            ])
        }
        return .object(object)
    }
}
