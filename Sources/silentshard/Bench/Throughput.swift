import Foundation
import MPCCrypto
import SilentShardCore
import duo

/// Node throughput: `clients` concurrent app sessions (each with its own device key and key) signing
/// ECDSA in a loop against one node process for `seconds`. The clients run in this process on the
/// same machine and compute the app's half of every signature, so they compete with the node for the
/// cores; the node's own CPU time per signature (from /proc) gives its capacity per core regardless.
enum Throughput {
    struct Result: Sendable {
        var clients: Int
        var signsPerSecond: Double
        var peakRSSMiB: Double
        /// Node CPU milliseconds per signature.
        var nodeCPUMsPerSign: Double
    }

    static func measure(node: NodeProcess, clients: Int, seconds: Double) async throws -> Result {
        let sessions = (0..<clients).map { _ in
            DuoBench.makeSession(algorithm: .ecdsa, cloudKey: node.verifyingKey,
                                 client: DuoNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.port)")))
        }
        var keyshares: [Keyshare] = []
        for session in sessions { keyshares.append(try await session.keygen()) }
        let cpuBefore = node.cpuSeconds ?? 0
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for (session, keyshare) in zip(sessions, keyshares) {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        let message = Data(SecureRandom.bytes(count: 32))
                        let signature = try await session.signature(keyshare: keyshare, message: message)
                        guard NetworkedDemo.verifies(signature, message: message, key: Array(keyshare.publicKey), algorithm: .ecdsa) else {
                            throw BenchError("a throughput signature did not verify")
                        }
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - start
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpu = (node.cpuSeconds ?? cpuBefore) - cpuBefore
        return Result(clients: clients, signsPerSecond: Double(counts) / wall, peakRSSMiB: node.peakRSSMiB ?? 0,
                      nodeCPUMsPerSign: counts > 0 ? cpu * 1000 / Double(counts) : 0)
    }
}
