import Foundation

/// A small SVG writer for the bench chart: one row per (mode, algorithm, operation), a bar per
/// transport (WebSocket, in-memory) on a logarithmic millisecond axis, and the goal as a red tick.
enum SVGChart {
    static func render(_ results: [BenchResult]) -> String {
        let rows = orderedRows(results)
        let left = 230.0, right = 40.0, top = 60.0, rowHeight = 34.0, width = 900.0
        let plotWidth = width - left - right
        let height = top + Double(rows.count) * rowHeight + 60
        let minLog = -1.0, maxLog = 3.0   // 0.1 ms … 1000 ms
        func x(_ ms: Double) -> Double {
            let clamped = min(max(log10(max(ms, 0.1)), minLog), maxLog)
            return left + (clamped - minLog) / (maxLog - minLog) * plotWidth
        }
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(Int(left))" y="24" font-size="16" font-weight="bold">SilentShard operation latency (median, log scale)</text>
            <rect x="\(Int(left))" y="34" width="12" height="10" fill="#2b6cb0"/><text x="\(Int(left) + 16)" y="43">WebSocket (loopback)</text>
            <rect x="\(Int(left) + 170)" y="34" width="12" height="10" fill="#a0aec0"/><text x="\(Int(left) + 186)" y="43">in-memory</text>
            <line x1="\(Int(left) + 290)" y1="39" x2="\(Int(left) + 302)" y2="39" stroke="#e53e3e" stroke-width="3"/><text x="\(Int(left) + 306)" y="43">goal</text>

            """
        for exponent in Int(minLog)...Int(maxLog) {
            let ms = pow(10, Double(exponent))
            let gx = x(ms)
            svg += "<line x1=\"\(f(gx))\" y1=\"\(f(top - 6))\" x2=\"\(f(gx))\" y2=\"\(f(top + Double(rows.count) * rowHeight))\" stroke=\"#e2e8f0\"/>\n"
            svg += "<text x=\"\(f(gx))\" y=\"\(f(top + Double(rows.count) * rowHeight + 18))\" text-anchor=\"middle\">\(ms < 1 ? String(ms) : String(Int(ms))) ms</text>\n"
        }
        for (index, row) in rows.enumerated() {
            let y = top + Double(index) * rowHeight
            svg += "<text x=\"\(f(left - 8))\" y=\"\(f(y + 20))\" text-anchor=\"end\">\(escape(row.label))</text>\n"
            if let ws = row.websocket {
                svg += "<rect x=\"\(f(left))\" y=\"\(f(y + 4))\" width=\"\(f(x(ws) - left))\" height=\"12\" fill=\"#2b6cb0\"/>\n"
                svg += "<text x=\"\(f(x(ws) + 4))\" y=\"\(f(y + 14))\" font-size=\"10\">\(format(ws))</text>\n"
            }
            if let memory = row.memory {
                svg += "<rect x=\"\(f(left))\" y=\"\(f(y + 17))\" width=\"\(f(x(memory) - left))\" height=\"12\" fill=\"#a0aec0\"/>\n"
                svg += "<text x=\"\(f(x(memory) + 4))\" y=\"\(f(y + 27))\" font-size=\"10\">\(format(memory))</text>\n"
            }
            if let goal = row.goal {
                svg += "<line x1=\"\(f(x(goal)))\" y1=\"\(f(y + 1))\" x2=\"\(f(x(goal)))\" y2=\"\(f(y + 32))\" stroke=\"#e53e3e\" stroke-width=\"3\"/>\n"
            }
        }
        return svg + "</svg>\n"
    }

    private struct Row {
        var label: String
        var websocket: Double?
        var memory: Double?
        var goal: Double?
    }

    private static func orderedRows(_ results: [BenchResult]) -> [Row] {
        var rows: [Row] = []
        for result in results {
            let label = "\(result.mode) \(result.algorithm) \(result.operation)"
            var row = rows.first { $0.label == label } ?? Row(label: label, goal: BenchGoals.medianGoal(
                mode: result.mode, algorithm: result.algorithm, operation: result.operation))
            // The chart compares the undelayed transports; `--rtt` rows (…+rtt) are in the table and JSON only.
            switch result.transport {
            case "websocket", "wss": row.websocket = result.sample.medianMs
            case "memory": row.memory = result.sample.medianMs
            default: continue
            }
            if let index = rows.firstIndex(where: { $0.label == label }) { rows[index] = row } else { rows.append(row) }
        }
        return rows
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
    private static func format(_ ms: Double) -> String { ms < 10 ? String(format: "%.2f ms", ms) : String(format: "%.0f ms", ms) }
    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
    }
}
