import CSodium
import Dispatch
import Testing
@testable import MPCCrypto

@Suite("BoundedCache")
struct BoundedCacheTests {
    @Test("keeps at most capacity entries and evicts the oldest first")
    func evictsOldest() {
        let cache = BoundedCache<Int, String>(capacity: 3)
        for k in 0..<3 { cache.insert("v\(k)", for: k) }
        #expect(cache.count == 3)
        cache.insert("v3", for: 3)
        #expect(cache.count == 3)
        #expect(cache.value(for: 0) == nil)
        #expect(cache.value(for: 1) == "v1")
        #expect(cache.value(for: 3) == "v3")
        cache.insert("v4", for: 4)
        #expect(cache.value(for: 1) == nil)
        #expect(cache.value(for: 2) == "v2")
        // Re-inserting a present key replaces its value without evicting anything.
        cache.insert("v2'", for: 2)
        #expect(cache.count == 3)
        #expect(cache.value(for: 2) == "v2'")
    }

    @Test("computes once per key and does not cache errors")
    func computesOnce() throws {
        struct Failure: Error {}
        let cache = BoundedCache<String, Int>(capacity: 8)
        var calls = 0
        let first = cache.value(for: "a") { () -> Int in calls += 1; return 7 }
        let second = cache.value(for: "a") { () -> Int in calls += 1; return 8 }
        #expect(first == 7 && second == 7 && calls == 1)
        #expect(throws: Failure.self) { try cache.value(for: "b") { () throws(Failure) -> Int in throw Failure() } }
        #expect(cache.value(for: "b") == nil)
    }

    @Test("concurrent inserts and lookups stay within capacity")
    func concurrent() {
        let cache = BoundedCache<Int, Int>(capacity: 64)
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for k in 0..<2_000 {
                let key = (k * 31 + worker) % 500
                cache.insert(key * 2, for: key)
                if let value = cache.value(for: key) { precondition(value == key * 2) }
            }
        }
        #expect(cache.count <= 64)
    }
}

@Suite("Ed25519 point validation cache")
struct Ed25519ValidationCacheTests {
    @Test("cached answers equal libsodium's for valid, small-order, non-canonical and random encodings")
    func matchesLibsodium() {
        var encodings: [[UInt8]] = (0..<8).map { _ in Ed25519.SigningKey().verifyingKey.bytes }
        encodings.append([UInt8](repeating: 0, count: 32))                        // small order (y = 0)
        encodings.append([1] + [UInt8](repeating: 0, count: 31))                  // the identity
        encodings.append([0xed] + [UInt8](repeating: 0xff, count: 30) + [0x7f])   // y = p, non-canonical
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        for _ in 0..<64 { encodings.append((0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }) }
        encodings += encodings.map { Array($0.dropLast()) + [$0[31] ^ 0x80] }    // the other sign of x
        for _ in 0..<3 {
            for encoding in encodings {
                let libsodium = crypto_core_ed25519_is_valid_point(encoding) == 1
                #expect(Ed25519.isValidPoint(encoding) == libsodium)
                #expect(((try? Ed25519.VerifyingKey(bytes: encoding)) != nil) == libsodium)
            }
        }
    }
}
