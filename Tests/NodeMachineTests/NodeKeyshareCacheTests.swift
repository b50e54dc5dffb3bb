import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardCore
import Testing
@testable import CloudNode

@Suite("NodeKeyshareCache")
struct NodeKeyshareCacheTests {
    @Test("one decode per distinct share; a refreshed share is its own entry; bad bytes are refused every time")
    func distinctSharesDistinctEntries() throws {
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let original = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        let refreshed = try FROST.LocalRun.keyGeneration(threshold: 2, parties: 2, sessionId: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) },
                                                         mode: { .refresh(original[Int($0)]) }, using: &rng)
        let cache = NodeKeyshareCache(capacity: 8)

        let first = try cache.keyshare(algorithm: .eddsa, mode: .duo, protocolBytes: original[1].encoded)
        let again = try cache.keyshare(algorithm: .eddsa, mode: .duo, protocolBytes: original[1].encoded)
        #expect(cache.count == 1)
        #expect(first.generation == Data(original[1].generation) && again.generation == first.generation)

        let next = try cache.keyshare(algorithm: .eddsa, mode: .duo, protocolBytes: refreshed[1].encoded)
        #expect(cache.count == 2)
        #expect(next.keyId == first.keyId)
        #expect(next.generation == Data(refreshed[1].generation) && next.generation != first.generation)
        #expect(try next.frostKeyshare().encoded == refreshed[1].encoded)

        // Another mode or group is another entry, never the cached value.
        let trio = try cache.keyshare(algorithm: .eddsa, mode: .trio, protocolBytes: original[1].encoded,
                                      groupId: [UInt8](repeating: 7, count: 16))
        #expect(cache.count == 3 && trio.mode == .trio)

        var corrupted = original[1].encoded
        corrupted[corrupted.count - 1] ^= 1
        for _ in 0..<2 {
            #expect(throws: SilentShardError.self) {
                try cache.keyshare(algorithm: .eddsa, mode: .duo, protocolBytes: corrupted)
            }
        }
        #expect(throws: SilentShardError.self) {
            try cache.keyshare(algorithm: .ecdsa, mode: .duo, protocolBytes: original[1].encoded)
        }
        #expect(cache.count == 3)
    }
}
