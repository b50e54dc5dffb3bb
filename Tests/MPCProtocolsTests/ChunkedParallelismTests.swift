import Synchronization
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// `ChunkedParallelism.map` returns the chunk results in order and releases its own copies of them
/// (AddressSanitizer's leak check found every KOS/RVOLE chunk result leaked: the slots were freed
/// without being deinitialized).
@Suite("Chunked parallelism", .heavy)
struct ChunkedParallelismTests {
    final class Probe: Sendable {
        let counter: Counter
        init(_ counter: Counter) { self.counter = counter; counter.value.add(1, ordering: .relaxed) }
        deinit { counter.value.subtract(1, ordering: .relaxed) }
    }

    final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    @Test func resultsInOrderAndReleased() {
        let width = ChunkedParallelism.width
        ChunkedParallelism.width = 4
        defer { ChunkedParallelism.width = width }
        let counter = Counter()
        do {
            let ranges = ChunkedParallelism.map(count: 256, minimumChunk: 64) { range in (range, Probe(counter)) }
            #expect(ranges.map(\.0) == [0..<64, 64..<128, 128..<192, 192..<256])
            #expect(counter.value.load(ordering: .relaxed) == 4)
        }
        #expect(counter.value.load(ordering: .relaxed) == 0, "chunk results leaked")
    }
}
