import Foundation
import MPCCrypto

/// Where a ``NodeRateLimiter`` keeps the counters a cluster shares (`docs/protocol/session.md` §9.5): the node's
/// database (`NodeShareStore+RateLimits`), reached off Swift's cooperative pool, with a wall clock
/// every process of the cluster agrees on (windows are compared across processes and machines).
package struct ClusterRateLimits: Sendable {
    let store: NodeShareStore
    let queue: NodeStoreQueues
    /// Wall-clock milliseconds since 1970 (tests pass their own).
    let clock: @Sendable () -> UInt64

    package init(store: NodeShareStore,
                 clock: @escaping @Sendable () -> UInt64 = { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }) {
        self.store = store
        self.clock = clock
        queue = NodeStoreQueues(label: "silentshard.rate-limits", width: 2)
    }

    /// Runs `body` with the store and the time on the limits' queues.
    func run<T: Sendable>(_ body: @escaping @Sendable (NodeShareStore, UInt64) throws(NodeStoreError) -> T)
        async -> Result<T, NodeStoreError> {
        let (store, now) = (store, clock())
        do {
            return .success(try await queue.run { () throws(NodeStoreError) -> T in try body(store, now) })
        } catch {
            return .failure(error)
        }
    }

    /// The bucket of failed device signatures of `deviceKey` under `principal` (a subject, or `address …`).
    static func deviceBucket(_ deviceKey: [UInt8], principal: String) -> RateBucket {
        RateBucket(kind: "device-failures", key: principal + "\u{0}" + Hex.encode(deviceKey))
    }

    static func authenticationBucket(_ address: String) -> RateBucket { RateBucket(kind: "auth-failures", key: address) }

    static func keyCreationBucket(_ principal: String) -> RateBucket { RateBucket(kind: "key-creations", key: principal) }
}
