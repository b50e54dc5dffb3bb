import SilentShardTestSupport
import XCTest
import trio

/// 200 connect/send/read/disconnect cycles leave the process's threads and file descriptors where
/// they started. XCTest, not Swift Testing: `swift test` runs XCTest cases one at a time in their
/// own process, so no concurrently running test disturbs the counts.
final class ResourceTests: XCTestCase {
    func testCyclesReleaseThreadsAndDescriptors() async throws {
        #if os(Linux)
        let peer = try await PythonPeer.shared()
        let client = TrioNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws, authenticationToken: "t"))
        func cycle(_ index: Int) async throws {
            try await client.connect(action: TrioAction.ECDSA.Signature(), params: nil)
            _ = try await client.read()  // hello
            _ = try await client.read()  // token echo
            try await client.send(bytes: Data([UInt8(truncatingIfNeeded: index)]))
            let echoed = try await client.read()
            XCTAssertEqual(echoed, Data([UInt8(truncatingIfNeeded: index)]))
            try await client.disconnect()
        }
        // A client dropped while connected must release its connection too (its deinit closes it).
        func dropConnected() async throws {
            let dropped = TrioNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws))
            try await dropped.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
            _ = try await dropped.read()
        }
        // Warm up what the runtime creates lazily (cooperative and dispatch threads, timers).
        for index in 0..<5 { try await cycle(index) }
        try await dropConnected()
        try await Task.sleep(for: .milliseconds(50))  // the runtime's timer descriptor, created at the first sleep
        // The dropped client's I/O thread exits just after its deinit closed the connection (up to 5 s
        // for slow runs, e.g. under ThreadSanitizer).
        for _ in 0..<100 where threadNames().contains("SilentShard.WS") {
            try await Task.sleep(for: .milliseconds(50))
        }
        try await client.connect(action: TrioAction.ECDSA.Signature(), params: nil)
        XCTAssertEqual(threadNames().filter { $0 == "SilentShard.WS" }.count, 1, "the I/O thread is named")
        try await client.disconnect()
        let threads = try await settledCount("/proc/self/task", atMost: Int.max)
        let descriptors = try await settledCount("/proc/self/fd", atMost: Int.max)
        let start = ContinuousClock.now
        for index in 0..<200 { try await cycle(index) }
        let elapsed = ContinuousClock.now - start
        try await dropConnected()
        let threadsAfter = try await settledCount("/proc/self/task", atMost: threads)
        let descriptorsAfter = try await settledCount("/proc/self/fd", atMost: descriptors)
        print("resource test: 200 cycles in \(elapsed); threads \(threads) → \(threadsAfter), descriptors \(descriptors) → \(descriptorsAfter)")
        XCTAssertLessThanOrEqual(threadsAfter, threads)
        XCTAssertLessThanOrEqual(descriptorsAfter, descriptors)
        #endif
    }

    /// The names (`comm`) of this process's threads.
    private func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.map {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .newlines)
        }
    }

    /// Entries in `directory` (for tasks: not counting the runtime's own pools, libdispatch's
    /// `*-qos*` workers, which it grows and reaps on its own schedule), waiting up to 2 s for them to drop to `limit` (threads exit just after
    /// they resume the last continuation).
    private func settledCount(_ directory: String, atMost limit: Int) async throws -> Int {
        var count = Int.max
        for _ in 0..<100 {
            count = directory.hasSuffix("task")
                ? threadNames().filter { !$0.contains("qos") }.count
                : try FileManager.default.contentsOfDirectory(atPath: directory).count
            if count <= limit { return count }
            try await Task.sleep(for: .milliseconds(20))
        }
        return count
    }
}
