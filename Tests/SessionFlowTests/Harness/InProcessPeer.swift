import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import trio

/// Node A's link to node B in process: each `openLink` starts B's `serveLink` on a fresh pipe.
/// `down` makes every open fail (B unreachable); `tamperToB` rewrites messages A sends on the link
/// (a misbehaving relay); `dropAfter` closes the link after A sent that many messages (B dies).
final class InProcessPeer: TrioPeerConnector, @unchecked Sendable {
    let runner: LockedValue<NodeStepRunner?> = LockedValue(nil)
    let down = LockedValue(false)
    /// B's end of the link is open but nobody answers.
    let silent = LockedValue(false)
    private let silentEnds = LockedValue<[InMemoryNetworkClient]>([])
    /// The link dies after A sent this many messages on it (B crashes mid-session).
    let dieAfter = LockedValue<Int?>(nil)
    let tamperToB: @Sendable (Int, Data) -> Data
    private let tasks = LockedValue<[Task<NodeStepReport, Never>]>([])

    /// Rewrites messages B sends A on the link.
    let tamperToA: @Sendable (Int, Data) -> Data
    /// Cuts (or delays) the link before a chosen message.
    let cutter = LinkCutter()

    init(tamperToB: @escaping @Sendable (Int, Data) -> Data = { $1 }, tamperToA: @escaping @Sendable (Int, Data) -> Data = { $1 }) {
        self.tamperToB = tamperToB
        self.tamperToA = tamperToA
    }

    func openLink() async throws -> any NodeStepConnection {
        guard !down.withLock({ $0 }), let runner = runner.withLock({ $0 }) else { throw NetworkError.connectionFailed(reason: "B down") }
        let (a, b) = InMemoryNetworkClient.pair()
        try await a.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        try await b.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        if silent.withLock({ $0 }) {
            // B accepts the connection but never answers (hung process).
            silentEnds.withLock { $0.append(b) }
        } else {
            let toA = PipeConnection(end: b, tamper: tamperToA, other: a, cutter: cutter, direction: .bToA)
            let task = Task { await runner.serveLink(connection: toA) }
            tasks.withLock { $0.append(task) }
        }
        return PipeConnection(end: a, tamper: tamperToB, dieAfter: dieAfter.withLock { $0 }, other: b, cutter: cutter,
                              direction: .aToB)
    }

    /// B's reports of every link served so far (waits for running ones).
    func reports() async -> [NodeStepReport] {
        var out: [NodeStepReport] = []
        for task in tasks.withLock({ $0 }) { out.append(await task.value) }
        return out
    }
}

