import SessionEngine

/// A node behind the app (second security review finding 1): after its database was restored from a
/// backup older than a key's last refresh, the node's CURRENT generation is older than the app's. Answering
/// STALE_GENERATION would tell the app that *its* share is stale; an app (or a user restoring an old
/// backup of the share) acting on that could replace the only share that still matches the key's newest
/// generation. So a generation the node has never seen is NODE_BEHIND (session.md §10), which the SDK reports
/// as its `nodeBehind` error without touching the app's share.
extension NodeStepRunner {
    /// The REJECT for an app generation `appGen` that is not this node's CURRENT `current` (`prepared`: the
    /// node's PREPARED generation, if any): STALE_GENERATION when the node knows the generation (its PREPARED
    /// one, or one in its decision log: the app is behind, or holds a rolled-back generation), NODE_BEHIND
    /// when it does not. The detail is the node's current generation either way.
    func generationMismatch(keyId: String, appGen: [UInt8]?, current: [UInt8], prepared: [UInt8]?) async -> SetupRejection {
        guard let appGen, appGen != prepared else { return SetupRejection(.staleGeneration, detail: current) }
        do {
            let known = try await onStoreQueue { [store] () throws(NodeStoreError) -> Bool in
                try store.decision(keyId: keyId, gen: appGen) != nil
            }
            return SetupRejection(known ? .staleGeneration : .nodeBehind, detail: current)
        } catch {
            return SetupRejection(.storageFailure)
        }
    }
}
