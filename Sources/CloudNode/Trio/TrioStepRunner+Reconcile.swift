import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Reconcile at a trio node (`specs/session.md` §7.3): ACCEPT carries `key_status`; then the app's
/// DONE, its COMMIT(g, D, context reconcile) — which commits a PREPARED g without READY (the app saw
/// every node's signed status) — or its ABORT(rollback g), which tombstones g.
extension TrioStepRunner {
    /// §4.3 steps 9–10 for reconcile: a share (CURRENT or PREPARED) of another device is
    /// DEVICE_NOT_REGISTERED; an unknown key id reports an empty status. A banned device may still
    /// reconcile (§9.4: bans refuse every session except reconcile), so its app and the nodes agree.
    func reconcileStatus(_ setup: ValidatedSetup) async throws(SetupRejection) -> KeyStatus {
        guard let keyIDBytes = setup.payload.keyID, let appStateBytes = setup.payload.appState,
              let appState = try? AppState(bytes: appStateBytes)
        else { throw SetupRejection(.invalidParameter) }
        let keyID = Hex.encode(keyIDBytes)
        let deviceIdentity = setup.deviceKey.identity
        let stagedGen = appState.staged?.gen
        let state: (current: NodeKeyshare?, prepared: NodeKeyshare?, decision: CommitDecision?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                (try store.share(keyId: keyID),
                 try store.share(keyId: keyID, slot: .prepared),
                 try stagedGen.flatMap { gen throws(NodeStoreError) in try store.decision(keyId: keyID, gen: gen) })
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        for share in [state.current, state.prepared].compactMap({ $0 }) {
            guard let blob = try? NodeShareBlob(bytes: share.bytes), blob.deviceIdentity == deviceIdentity else {
                throw SetupRejection(.deviceNotRegistered)
            }
        }
        let decision: KeyStatus.Decision
        switch state.decision {
        case .committed?: decision = .committed
        case .aborted?: decision = .aborted
        case nil: decision = .unknown
        }
        let prepared = state.prepared.map { ($0.gen, $0.digest ?? [UInt8](repeating: 0, count: 32)) }
        return KeyStatus(currentGen: state.current?.gen, prepared: prepared, preparedHoldsCommit: false, decision: decision)
    }

    /// Waits for the app's decision and carries it out (`NodeReconcile`, trio policy); answers OUTCOME
    /// for COMMIT and rollback.
    func reconcileRunning(_ setup: ValidatedSetup, channel: inout PartyFrameChannel, send: SessionDriver.Send,
                          read: SessionDriver.Read, relay: SessionDriver.Relay, owner: String) async -> TrioStepReport {
        guard let keyIDBytes = setup.payload.keyID else { return .failed(.invalidInput(reason: "key id")) }
        let keyId = Hex.encode(keyIDBytes)
        let party = "device:" + Hex.encode(setup.deviceKey.identity)
        let storeCalls = NodeReconcileExecutor.Store(commit: { [self] (gen: [UInt8], digest: [UInt8]) throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.commit(keyId: keyId, gen: gen, digest: digest, party: party, owner: owner)
                    return (.committed, try store.share(keyId: keyId)?.gen)
                } catch .alreadyDecided {
                    return (.aborted, try store.share(keyId: keyId)?.gen)
                } catch .preparedMismatch {
                    let current = try store.share(keyId: keyId)?.gen
                    return (current == gen ? .committed : .inDoubt, current)
                }
            }
        }, rollback: { [self] (gen: [UInt8]) throws(NodeStoreError) in
            try await onStoreQueue { [store] () throws(NodeStoreError) in
                do throws(NodeStoreError) {
                    try store.abort(keyId: keyId, gen: gen, party: party)
                    return (.aborted, try store.share(keyId: keyId)?.gen)
                } catch .alreadyDecided {
                    return (.committed, try store.share(keyId: keyId)?.gen)
                }
            }
        })
        switch await NodeReconcileExecutor.run(NodeReconcile(policy: .trio, keyID: keyIDBytes), channel: &channel,
                                               store: storeCalls, send: send, read: read, relay: relay) {
        case .reconciled(let decision): return .reconciled(keyId: keyId, outcome: decision)
        case .failed(let error): return .failed(error)
        }
    }
}
