// Release-mode loopback figures for the WebSocket engine against the Python peer
// (interop/ws_peer.py). Built and run by `scripts/bench transport`; not part of the package.
import Foundation

@main
struct TransportBench {
    static func main() async throws {
        let root = URL(fileURLWithPath: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : ".")
        let process = Process()
        process.executableURL = root.appendingPathComponent(".venv/bin/python")
        process.arguments = [root.appendingPathComponent("interop/ws_peer.py").path]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) { line.append(output.fileHandleForReading.availableData) }
        let ports = try JSONSerialization.jsonObject(with: line) as? [String: Any] ?? [:]
        let ca = try Data(contentsOf: URL(fileURLWithPath: ports["ca_der"] as? String ?? ""))
        for (scheme, key) in [("ws", "ws"), ("wss", "wss")] {
            let port = ports[key] as? Int ?? 0
            let host = scheme == "wss" ? "localhost" : "127.0.0.1"
            let config = WebsocketConfig(url: "\(scheme)://\(host):\(port)", trustedRootCertificates: [ca])
            let engine = WebSocketClientEngine(config: config)
            let url = try NetworkRoute.url(base: config.url, segments: ["trio", "keygen"], params: nil, websocket: true)
            var connects: [Duration] = []
            for _ in 0..<20 {
                let start = ContinuousClock.now
                try await engine.connect(url: url, subprotocol: "trio")
                _ = try await engine.read()
                connects.append(ContinuousClock.now - start)
                await engine.disconnect()
            }
            try await engine.connect(url: url, subprotocol: "trio")
            _ = try await engine.read()
            var trips: [Duration] = []
            for _ in 0..<2000 {
                let start = ContinuousClock.now
                try await engine.send(.binary(Data(count: 32)))
                _ = try await engine.read()
                trips.append(ContinuousClock.now - start)
            }
            var echoes: [Duration] = []
            let big = Data(repeating: 0x5A, count: 8 << 20)
            for _ in 0..<5 {
                let start = ContinuousClock.now
                try await engine.send(.binary(big))
                _ = try await engine.read()
                echoes.append(ContinuousClock.now - start)
            }
            await engine.disconnect()
            connects.sort(); trips.sort(); echoes.sort()
            print("\(scheme): connect+upgrade+hello median \(ms(connects[10])); 32 B round trip median \(ms(trips[1000])) p99 \(ms(trips[1980])); 8 MiB echo median \(ms(echoes[2])) best \(ms(echoes[0]))")
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    static func ms(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return String(format: "%.3f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
}

enum SilentShard { static let version = "bench" }
