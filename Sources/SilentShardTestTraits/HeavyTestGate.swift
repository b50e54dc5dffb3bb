import Foundation
import Testing

/// A limit on how many CPU-heavy tests (DKLs23 keygens, trio end-to-end runs, fault matrices) run at once
/// in the test process, whichever suites they are in.
///
/// Swift Testing starts every test at once. On a 2-core machine dozens of keygens then share the cores,
/// each round of each session runs dozens of times slower than alone, and step deadlines that are
/// generous for one session (a 30 s frame deadline, a 60 s read timeout) expire for reasons no test is
/// about. Behind the gate the heavy tests take turns, so each one's sessions get a fair share of the
/// machine while light tests go on beside them.
///
/// The limit is `SILENTSHARD_TEST_HEAVY_CONCURRENCY` (a positive integer), or else twice the number of
/// active cores (a heavy test spends part of its time waiting on sockets and deadlines).
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    /// Only test cases take a turn (a suite holding a turn while its tests wait for one would deadlock).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> HeavyTestTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        await HeavyTestGate.shared.enter()
        do {
            try await function()
        } catch {
            await HeavyTestGate.shared.leave()
            throw error
        }
        await HeavyTestGate.shared.leave()
    }
}

extension Trait where Self == HeavyTestTrait {
    /// The test (or every test of the suite) takes a turn at the process-wide `HeavyTestGate`.
    public static var heavy: HeavyTestTrait { HeavyTestTrait() }
}

/// A counting semaphore for async code: first come, first served.
public actor HeavyTestGate {
    /// The process's gate for `.heavy` tests.
    public static let shared = HeavyTestGate(permits: HeavyTestGate.configuredPermits)

    private var available: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(permits: Int) {
        available = max(1, permits)
    }

    /// Waits for a turn.
    public func enter() async {
        if available > 0 {
            available -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Ends a turn: the longest waiting test goes next.
    public func leave() {
        if waiting.isEmpty {
            available += 1
        } else {
            waiting.removeFirst().resume()
        }
    }

    static var configuredPermits: Int {
        if let text = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_HEAVY_CONCURRENCY"],
           let value = Int(text), value > 0 {
            return value
        }
        return 2 * max(1, ProcessInfo.processInfo.activeProcessorCount)
    }
}
