import CloudNode
import duo
import Foundation
import MPCCrypto
import SilentShardCore
import Testing

/// A step handler stuck in an await that ignores cancellation (a store call that never returns) until the test
/// lets it go.
private final class StuckStepHandler: StepHandler, @unchecked Sendable {
    let started = LockedValue(false)
    private let release = LockedValue<(open: Bool, waiting: CheckedContinuation<Void, Never>?)>((false, nil))

    func run(_ context: StepContext) async throws {
        started.withLock { $0 = true }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = release.withLock { state -> Bool in
                if state.open { return true }
                state.waiting = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        release.withLock { state -> CheckedContinuation<Void, Never>? in
            state.open = true
            return state.waiting.take()
        }?.resume()
    }
}

/// Issue 32, "a hang must fail fast": `NodeServer.stop` waited for every cancelled session with no deadline, so one
/// session stuck in an uncancellable await hung the shutdown (and a CI run with it). It now waits at most
/// `sessionDeadline` and reports how many sessions it left behind.
@Suite("NodeServer.stop has a deadline", .timeLimit(.minutes(2)))
struct StopDeadlineTests {
    @Test func stopReturnsWithAStuckSessionAndCountsIt() async throws {
        let handler = StuckStepHandler()
        let node = try TestNode.start(stepHandler: handler)
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1]))   // the node reads the token with the first message
        while !handler.started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
        let stuck = await node.server.stop(grace: .milliseconds(100), sessionDeadline: .milliseconds(300))
        #expect(stuck == 1)
        #expect(node.log.contains("1 session(s) still running"))
        handler.open()
        try? await client.disconnect()
    }

    @Test func cleanStopReportsNoneLeft() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1, 2, 3]))
        #expect(try await client.read() == Data([1, 2, 3]))
        #expect(await node.server.stop() == 0)
        try? await client.disconnect()
    }
}
