import MPCCrypto
import SessionEngine

/// session.md §7.2 at a node, for duo and trio alike: one share-changing session (or reconcile) per key at a time.
/// A session meeting another's lease is refused with KEY_BUSY before it reads the key's state; signing
/// takes none. The lease row holds the session's instance id and expires after `seconds` (or at once
/// when the process holding it is gone), so a crash never locks a key for good.
struct KeyLease: Sendable {
    let keyID: String
    let holder: [UInt8]

    /// The key a step must lease, or nil (signing, presigning, export, keygen without a key id).
    static func key(for setup: ValidatedSetup) -> String? {
        guard setup.operation.row.admission.lease, let keyID = setup.payload.keyID else { return nil }
        return keyID.hex
    }

    /// Takes the lease `setup` needs, if any: nil when none is needed; KEY_BUSY when another session
    /// holds it; STORAGE_FAILURE when the store fails.
    static func acquire(for setup: ValidatedSetup, seconds: Int64, store: NodeShareStore,
                        queue: NodeStoreQueues) async throws(SetupRejection) -> KeyLease? {
        guard let keyID = key(for: setup) else { return nil }
        let lease = KeyLease(keyID: keyID, holder: setup.instanceID.bytes)
        do {
            try await queue.run { () throws(NodeStoreError) in
                try store.acquireLease(keyId: keyID, holder: lease.holder, seconds: seconds)
            }
        } catch {
            if case .keyBusy = error { throw SetupRejection(.keyBusy) }
            throw SetupRejection(.storageFailure)
        }
        return lease
    }

    /// Gives the lease back (a failure leaves it to expire).
    func release(store: NodeShareStore, queue: NodeStoreQueues) async {
        let (keyID, holder) = (self.keyID, self.holder)
        try? await queue.run { () throws(NodeStoreError) in try store.releaseLease(keyId: keyID, holder: holder) }
    }
}
