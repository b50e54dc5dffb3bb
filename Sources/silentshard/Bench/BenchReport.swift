import Foundation

/// The bench's outputs: issue 9's JSON document and a Markdown table.
struct BenchReport {
    var results: [BenchResult]
    var throughput: [Throughput.Result]
    var secp256k1SignUs: Double
    var ed25519SignUs: Double
    var cores: Int
    /// `--pin`: the app on CPU 0, node processes on CPU 1.
    var pinned = false

    var json: JSONValue {
        .object([
            "results": .array(results.map { result in
                var object: [String: JSONValue] = [
                    "mode": .string(result.mode), "algorithm": .string(result.algorithm),
                    "operation": .string(result.operation), "transport": .string(result.transport),
                    "runs": .number(Double(result.sample.runs)), "medianMs": .number(result.sample.medianMs),
                    "p95Ms": .number(result.sample.p95Ms), "minMs": .number(result.sample.minMs),
                    "bytesSentPerParty": .number(Double(result.bytesSentPerParty)),
                ]
                object["baselineRatio"] = result.baselineRatio.map { .number($0) } ?? .null
                if let rtt = result.rttMs { object["rttMs"] = .number(Double(rtt)) }
                if let trips = result.roundTrips { object["roundTrips"] = .number(trips) }
                object["tls"] = .bool(result.tls)
                return .object(object)
            }),
            "throughput": .array(throughput.map { row in
                .object(["clients": .number(Double(row.clients)), "signsPerSecond": .number(row.signsPerSecond),
                         "peakRSSMiB": .number(row.peakRSSMiB), "nodeCPUMsPerSign": .number(row.nodeCPUMsPerSign)])
            }),
            "baselines": .object(["secp256k1SignUs": .number(secp256k1SignUs), "ed25519SignUs": .number(ed25519SignUs)]),
            "machine": .object(["cores": .number(Double(cores)), "pinned": .bool(pinned)]),
        ])
    }

    var markdown: String {
        func f(_ value: Double) -> String { String(format: value < 10 ? "%.2f" : "%.1f", value) }
        var lines = ["| mode | algorithm | operation | transport | runs | median ms | p95 ms | min ms | bytes sent per party | × baseline | goal |",
                     "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|"]
        for result in results {
            var goal = ""
            if result.transport == "websocket",
               let ms = BenchGoals.medianGoal(mode: result.mode, algorithm: result.algorithm, operation: result.operation) {
                goal = "≤ \(f(ms)) ms: " + (result.sample.medianMs <= ms ? "met" : "**missed**")
            }
            if result.algorithm == "ecdsa", result.operation == "sign", result.transport == "websocket" {
                let met = result.bytesSentPerParty <= BenchGoals.ecdsaSignBytes
                goal += (goal.isEmpty ? "" : "; ") + "≤ 60 kB: " + (met ? "met" : "**missed**")
            }
            if let trips = result.roundTrips, let rtt = result.rttMs {
                goal = String(format: "%.2f RTT at %d ms", trips, rtt)
                // The goal is for ws:// (issue 20); TLS 1.3 adds its handshake's round trip to each connection.
                if result.operation == "preSignFinal", !result.tls { goal += " (goal ≤ 2.2: " + (trips <= 2.2 ? "met" : "**missed**") + ")" }
                if result.tls { goal += " (wss: TLS handshake included)" }
            }
            lines.append("| \(result.mode) | \(result.algorithm) | \(result.operation) | \(result.transport) | \(result.sample.runs) | "
                         + "\(f(result.sample.medianMs)) | \(f(result.sample.p95Ms)) | \(f(result.sample.minMs)) | "
                         + "\(result.bytesSentPerParty) | \(result.baselineRatio.map { String(format: "%.0f×", $0) } ?? "") | \(goal) |")
        }
        if !throughput.isEmpty {
            lines += ["", "| concurrent clients | ECDSA duo signs/s | node CPU ms per sign | node peak RSS MiB | goal ≥ 150/s |",
                      "|---:|---:|---:|---:|---|"]
            for row in throughput {
                lines.append("| \(row.clients) | \(f(row.signsPerSecond)) | \(f(row.nodeCPUMsPerSign)) | \(f(row.peakRSSMiB)) | "
                             + (row.signsPerSecond >= BenchGoals.signsPerSecond ? "met" : "**missed**") + " |")
            }
        }
        lines += ["", "Baselines (single party, this process): libsecp256k1 ECDSA sign \(f(secp256k1SignUs)) µs, "
                  + "libsodium Ed25519 sign \(f(ed25519SignUs)) µs. Machine: \(cores) cores"
                  + (pinned ? "; WebSocket runs with the app on CPU 0 and node processes on CPU 1 (--pin)." : "; processes unpinned.")]
        return lines.joined(separator: "\n") + "\n"
    }
}
