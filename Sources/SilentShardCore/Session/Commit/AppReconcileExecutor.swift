import MPCProtocols

/// Performs ``AppReconcile``'s actions for the app (duo and trio alike) over the step's channel, after
/// the nodes' ACCEPTs (which carry their `key_status`). Every decision is the machine's.
package enum AppReconcileExecutor {
    /// The app's storage operations on the staged share.
    package struct Storage {
        package var promote: () async throws(SilentShardError) -> Void
        package var discard: () async throws(SilentShardError) -> Void

        package init(promote: @escaping () async throws(SilentShardError) -> Void,
                     discard: @escaping () async throws(SilentShardError) -> Void) {
            self.promote = promote
            self.discard = discard
        }

        /// The operations on `keyId`'s record in `storageClient`.
        package init(_ storageClient: any StorageClient, keyId: String) {
            self.init(promote: { () throws(SilentShardError) in
                do { _ = try await storageClient.promote(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            }, discard: { () throws(SilentShardError) in
                do { try await storageClient.discardStaged(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            })
        }
    }

    /// session.md §7.3 for the record `storageKeyId` through `storage` (its `current` keyshare and its `staged` one
    /// with digest D) under `policy`, with `nodes` over `channel`: the keyshare that is current afterwards.
    package static func settle(storageKeyId: String, current: Keyshare?, staged: (keyshare: Keyshare, digest: [UInt8])?,
                               policy: AppReconcile.Policy, nodes: [PartyIndex], channel: inout PartyFrameChannel,
                               storage: Storage, send: SessionDriver.Send,
                               read: SessionDriver.Read) async throws(SilentShardError) -> Keyshare {
        guard let reference = staged?.keyshare ?? current else { throw .keyNotFound(keyId: storageKeyId) }
        let reconcile = AppReconcile(policy: policy, storageKeyId: storageKeyId, keyID: reference.keyID,
                                     current: current?.gen,
                                     staged: staged.map { ($0.keyshare.gen, $0.digest) })
        switch await run(reconcile, nodes: nodes, channel: &channel, storage: storage,
                         send: send, read: read) {
        case .current:
            guard let current else { throw .abortedKeyshare(keyId: storageKeyId) }
            return current
        case .staged:
            guard let staged else { throw .reconcileConflict(keyId: storageKeyId) }
            return staged.keyshare
        case .failed(let error):
            throw error
        }
    }

    /// Runs `reconcile` with the statuses of `nodes`' ACCEPTs to its end.
    package static func run(_ reconcile: AppReconcile, nodes: [PartyIndex], channel: inout PartyFrameChannel, storage: Storage,
                            send: SessionDriver.Send, read: SessionDriver.Read) async -> AppReconcile.Ending {
        var machine = reconcile
        var statuses: [PartyIndex: KeyStatus?] = [:]
        for node in nodes { statuses[node] = channel.receiver.accepts[node]?.keyStatus }
        var action = machine.start(statuses: statuses)
        while true {
            do throws(SilentShardError) {
                switch action {
                case .sendDone:
                    try await send([try channel.control(.done, payload: DonePayload.none.encoded)])
                    action = machine.handle(.sent)
                case .sendCommit(let payload):
                    try await send([try channel.control(.commit, payload: payload.encoded)])
                    action = machine.handle(.sent)
                case .sendRollback(let payload):
                    try await send([try channel.control(.abort, payload: payload.encoded)])
                    action = machine.handle(.sent)
                case .awaitOutcomes:
                    var outcomes: [PartyIndex: OutcomePayload] = [:]
                    for node in nodes {
                        let frame = try await SessionDriver.awaitControl(.outcome, from: node, channel: &channel, read: read)
                        do { outcomes[node] = try OutcomePayload(bytes: frame.payload) } catch {
                            throw SilentShardError(error, frameSender: node)
                        }
                    }
                    action = machine.handle(.outcomes(outcomes))
                case .promote:
                    try await storage.promote()
                    action = machine.handle(.promoted)
                case .discard:
                    try await storage.discard()
                    action = machine.handle(.discarded)
                case .end(let ending):
                    return ending
                }
            } catch {
                action = machine.handle(.failed(error))
            }
        }
    }
}
