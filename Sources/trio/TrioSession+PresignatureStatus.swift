import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The app and its nodes agree on which presignatures still exist (`docs/protocol/session.md` §8.6):
/// PRESIG_QUERY over the preSignFinal route, PRESIG_STATUS signed by the node.
extension TrioSession {
    /// Asks each node which of `keyshare`'s presignatures (made with it) it still holds, deletes the app's
    /// records of those it can no longer finish, and returns what `preSignatures(keyshare:)` then lists.
    ///
    /// An unused presignature is kept only while its node holds it unused; one whose finish was recorded
    /// (`PreSignature.pendingMessage`) also while the node keeps the finish record that answers its resend.
    /// Everything else — expired, collected, deleted with a generation, a key or a banned device at the
    /// node — is dropped. A node's answer must be signed by its key, certified by the cluster key for the
    /// keyshare's group; otherwise nothing is dropped and the error is thrown. One POST per node with
    /// presignatures of this key (at most 256 ids each; more make more POSTs).
    public func reconcilePreSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try await core.observed("reconcilePreSignatures", keyId: keyshare.keyId) { () throws(SilentShardError) in
            _ = try await storedPreSignatures(keyshare: keyshare)
            let shelf = core.presignatures, keyId = keyshare.keyIdBytes
            let records = try await shelf.records(keyId: keyId).filter {
                if case .finished = $0.state { return false }
                return true
            }
            for signer: PartyIndex in [1, 2] {
                let asked = records.filter { $0.header.signer == signer }
                var start = 0
                while start < asked.count {
                    let chunk = Array(asked[start..<min(asked.count, start + PresignatureQueryPayload.maximumIds)])
                    start += chunk.count
                    let states = try await presignatureStates(keyshare: keyshare, signer: signer, ids: chunk.map(\.header.id))
                    for (record, state) in zip(chunk, states) {
                        try await dropUnless(heldBy: state, id: record.header.id, keyId: keyId)
                    }
                }
            }
            return try await storedPreSignatures(keyshare: keyshare)
        }
    }

    /// Deletes the record of `id` unless its node's `state` lets it still finish (checked again under the
    /// presignature's lock, in case a finish changed it meanwhile).
    private func dropUnless(heldBy state: PresignatureStatusPayload.State, id: [UInt8], keyId: [UInt8]) async throws(SilentShardError) {
        let shelf = core.presignatures
        try await PresignatureShelf.locks.locked("presig/" + Hex.encode(id)) { () throws(SilentShardError) in
            guard let record = try await shelf.record(id: id) else { return }
            let keep: Bool
            switch record.state {
            case .ready: keep = state == .held
            case .finishing: keep = state == .held || state == .consumed
            case .finished: keep = true
            }
            if !keep { try await shelf.remove(id: id, keyId: keyId) }
        }
    }

    /// One PRESIG_QUERY to node `signer` and its checked answer: one state per id, in order.
    private func presignatureStates(keyshare: Keyshare, signer: PartyIndex,
                                    ids: [[UInt8]]) async throws(SilentShardError) -> [PresignatureStatusPayload.State] {
        let queryID = InstanceID.random()
        let query = PresignatureQueryPayload(keyID: keyshare.keyID, ids: ids.compactMap { InstanceID($0) })
        let body = query.frame(signer: signer, instanceID: queryID).encoded()
        let answer: [UInt8]
        let start = ContinuousClock.now
        do {
            answer = [UInt8](try await core.client.sendPostRequest(action: actions.preSignFinal, params: keyshare.keyId,
                                                                   body: Data(body)))
        } catch {
            let failure = Self.networkError(error)
            core.recordPost(.preSignFinal, keyId: keyshare.keyId, sent: body.count, received: 0,
                            duration: ContinuousClock.now - start, error: failure)
            throw failure
        }
        core.recordPost(.preSignFinal, keyId: keyshare.keyId, sent: body.count, received: answer.count,
                        duration: ContinuousClock.now - start, error: nil)
        let frame: Frame
        do { frame = try Frame.parseSingle(answer) } catch { throw .malformedMessage(party: .node(signer)) }
        if frame.header.kind == .reject { throw rejection(frame) }
        guard frame.header.kind == .presigStatus, frame.header.sender == signer, frame.header.receiver == 0,
              frame.header.instanceID == queryID
        else { throw .protocolViolation(party: .node(signer)) }
        guard let status = try? PresignatureStatusPayload(bytes: frame.body) else { throw .malformedMessage(party: .node(signer)) }
        // Signed by the node key its certificate names, certified by the cluster key for this key's group.
        guard let cloudKey = try? CloudVerifyingKey.parse(core.engine.cloudVerifyingKey),
              (try? status.certificate.verify(issuer: cloudKey, senderIndex: signer, mode: .trio,
                                              nowSeconds: core.clock.milliseconds / 1000)) != nil,
              status.certificate.nodeKey == status.nodeKey, frame.hasValidSignature(by: status.nodeKey),
              keyshare.groupId.map({ [UInt8]($0) == status.certificate.groupID }) ?? true
        else { throw .messageAuthenticationFailed(party: .node(signer)) }
        guard status.keyID == keyshare.keyID, status.entries.map(\.id.bytes) == ids else {
            throw .protocolViolation(party: .node(signer))
        }
        return status.entries.map(\.state)
    }
}
