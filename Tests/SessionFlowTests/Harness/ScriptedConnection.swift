import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import duo

/// A node connection that replays scripted messages, then waits for more until closed, and records
/// what the node sends.
final class ScriptedConnection: NodeStepConnection {
    private let pipe = InMemoryNetworkClient.pair()
    private let sent = LockedValue<[Data]>([])
    private let closed = LockedValue<UInt16?>(nil)

    init(messages: [Data]) async throws {
        try await pipe.0.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await pipe.1.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        for message in messages { try await pipe.0.send(bytes: message) }
    }

    var sentFrames: [Frame] { sent.withLock { $0 }.compactMap { try? Frame.parseSingle([UInt8]($0)) } }
    var closeCode: UInt16? { closed.withLock { $0 } }

    func read() async throws -> Data { try await pipe.1.read() }
    func send(_ data: Data) async throws { sent.withLock { $0.append(data) } }
    func close(code: UInt16, reason: String) async {
        closed.withLock { $0 = $0 ?? code }
        try? await pipe.1.disconnect()
    }
}
