import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits the independent per-OT work of the OT extension and RVOLE (tens of thousands of SHA-2
/// compressions per signature) into contiguous chunks run on several cores, then combines the chunk
/// results in order — so the output is byte-for-byte the one of the serial loop. Chunks never share
/// mutable state: each builds its own hashers and partial sums. This shortens a party's critical path
/// (a duo signature's latency); it adds no throughput to a node already busy with other sessions.
public enum ChunkedParallelism {
    private static let configuredWidth = Atomic<Int>(1)

    /// Chunks per loop; 1 (the default) = serial. Raise it (e.g. to `onlineProcessors`) where a party has
    /// idle cores and latency matters — an app signing alone. A node serving many sessions gains nothing
    /// and pays thread wake-ups; measured on the shared 2-core VM under load, width 2 was no faster
    /// (`silentshard-bench dkls` compares both in one process).
    public static var width: Int {
        get { configuredWidth.load(ordering: .relaxed) }
        set { configuredWidth.store(max(1, min(newValue, 16)), ordering: .relaxed) }
    }

    /// The online processor count (a sensible `width` for an idle device), at most 4.
    public static var onlineProcessors: Int {
        let online = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return max(1, min(online, 4))
    }

    /// `body` over `count` items split into at most `width` contiguous ranges (fewer when there are
    /// fewer than `minimumChunk` items per chunk); results in range order.
    static func map<T: Sendable>(count: Int, minimumChunk: Int = 64, _ body: @Sendable (Range<Int>) -> T) -> [T] {
        let chunks = max(1, min(width, count / max(1, minimumChunk)))
        if chunks == 1 { return [body(0..<count)] }
        let results = ChunkResults<T>(count: chunks)
        defer {
            // The slots hold the chunk results: release them before freeing the memory.
            results.slots.deinitialize()
            results.slots.deallocate()
        }
        DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
            // Each iteration writes only its own slot.
            results.slots[chunk] = body((count * chunk / chunks)..<(count * (chunk + 1) / chunks))
        }
        return results.slots.compactMap { $0 }  // every chunk ran: all non-nil
    }
}

/// One slot per chunk, each written by exactly one `concurrentPerform` iteration and read after all
/// of them returned.
private struct ChunkResults<T>: @unchecked Sendable {
    let slots: UnsafeMutableBufferPointer<T?>
    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: nil)
    }
}
