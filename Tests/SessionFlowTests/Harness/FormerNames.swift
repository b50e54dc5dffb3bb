import CloudNode
import Foundation
import SilentShardCore
import SilentShardTestSupport

// The two harnesses' former names (Tests/DuoSessionTests, Tests/TrioSessionTests before issue 34 item 5), so that a
// suite written against them (e.g. on another branch of the same session) compiles unchanged once moved into this
// target. New suites use `SessionFixture`, `LoopbackClient(mode:)` and `PipeConnection.duo(end:)`.

/// `LoopbackClient` for a duo node, as the duo harness made it.
final class LoopbackDuoClient: LoopbackClient, @unchecked Sendable {
    init(runner: NodeStepRunner, tamper: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperSend: @escaping @Sendable (Int, Data) -> Data = { $1 }, principal: Principal? = nil,
         clientAddress: String? = nil) {
        super.init(mode: .duo, runner: runner, tamper: tamper, tamperSend: tamperSend, principal: principal,
                   clientAddress: clientAddress)
    }
}

/// `LoopbackClient` for trio's node A, as the trio harness made it.
final class LoopbackTrioClient: LoopbackClient, @unchecked Sendable {
    init(runner: NodeStepRunner, cutter: LinkCutter = LinkCutter(), tamper: @escaping @Sendable (Int, Data) -> Data = { $1 }) {
        super.init(mode: .trio, runner: runner, cutter: cutter, tamper: tamper)
    }
}

/// The duo node's end of an in-memory pipe, as the duo harness named it (`PipeConnection.duo(end:)`).
struct PipeNodeConnection: NodeStepConnection {
    private let pipe: PipeConnection

    init(end: InMemoryNetworkClient) { pipe = .duo(end: end) }

    func read() async throws -> Data { try await pipe.read() }
    func send(_ data: Data) async throws { try await pipe.send(data) }
    func close(code: UInt16, reason: String) async { await pipe.close(code: code, reason: reason) }
}
