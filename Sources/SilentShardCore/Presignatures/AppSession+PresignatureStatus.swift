import Foundation
import MPCCrypto
import MPCProtocols

/// The app and its nodes agree on which presignatures still exist (`docs/protocol/session.md` §8.6):
/// PRESIG_QUERY over the preSignFinal route, PRESIG_STATUS signed by the node.
extension AppSession {
    /// Asks the nodes which of `keyshare`'s presignatures they still hold and drops the app's records of
    /// those they can no longer finish (see `TrioSession.reconcilePreSignatures(keyshare:)`).
    package func reconcilePreSignatures(keyshare: Keyshare, action: any NetworkAction) async throws(SilentShardError) -> [PreSignature] {
        _ = try await storedPreSignatures(keyshare: keyshare)
        let shelf = presignatures, keyId = keyshare.keyIdBytes
        let records = try await shelf.records(keyId: keyId).filter {
            if case .finished = $0.state { return false }
            return true
        }
        for signer: PartyIndex in mode == .trio ? [1, 2] : [1] {
            let asked = records.filter { $0.header.signer == signer }
            var start = 0
            while start < asked.count {
                let chunk = Array(asked[start..<min(asked.count, start + PresignatureQueryPayload.maximumIds)])
                start += chunk.count
                // session.md §13.8 item 6: the steps' retry, each attempt a fresh query.
                let states = try await retryingPost { () throws(SilentShardError) in
                    try await presignatureStates(keyshare: keyshare, signer: signer, ids: chunk.map(\.header.id),
                                                 action: action)
                }
                for (record, state) in zip(chunk, states) {
                    try await dropUnless(heldBy: state, id: record.header.id, keyId: keyId)
                }
            }
        }
        return try await storedPreSignatures(keyshare: keyshare)
    }

    /// Deletes the record of `id` unless its node's `state` lets it still finish (decided on the record as it
    /// is under the presignature's lock, in case a finish changed it meanwhile).
    private func dropUnless(heldBy state: PresignatureStatusPayload.State, id: [UInt8], keyId: [UInt8]) async throws(SilentShardError) {
        try await presignatures.remove(id: id, keyId: keyId) { stored in
            guard case .record(let record) = stored else { return false }
            switch record.state {
            case .ready: return state != .held
            case .finishing: return state != .held && state != .consumed
            case .finished: return false
            }
        }
    }

    /// One PRESIG_QUERY to node `signer` and its checked answer: one state per id, in order.
    private func presignatureStates(keyshare: Keyshare, signer: PartyIndex, ids: [[UInt8]],
                                    action: any NetworkAction) async throws(SilentShardError) -> [PresignatureStatusPayload.State] {
        let queryID = InstanceID.random()
        let query = PresignatureQueryPayload(keyID: keyshare.keyID, ids: ids.compactMap { InstanceID($0) })
        let body = query.frame(signer: signer, instanceID: queryID).encoded()
        let answer: [UInt8]
        let start = ContinuousClock.now
        do {
            answer = [UInt8](try await client.sendPostRequest(action: action, params: keyshare.keyId,
                                                                   body: Data(body)))
        } catch {
            let failure = AppStepEngine.networkError(error)
            recordPost(.preSignFinal, keyId: keyshare.keyId, sent: body.count, received: 0,
                            duration: ContinuousClock.now - start, error: failure)
            throw failure
        }
        recordPost(.preSignFinal, keyId: keyshare.keyId, sent: body.count, received: answer.count,
                        duration: ContinuousClock.now - start, error: nil)
        let frame: Frame
        do { frame = try Frame.parseSingle(answer) } catch { throw .malformedMessage(party: .node(signer)) }
        if frame.header.kind == .reject { throw rejection(frame, expectedInstanceID: queryID, signer: signer) }
        guard frame.header.kind == .presigStatus, frame.header.sender == signer, frame.header.receiver == 0,
              frame.header.instanceID == queryID
        else { throw .protocolViolation(party: .node(signer)) }
        guard let status = try? PresignatureStatusPayload(bytes: frame.body) else { throw .malformedMessage(party: .node(signer)) }
        // Signed by the node's key: duo, the cloudVerifyingKey (or certified by it); trio, certified by the
        // cluster key for this key's group.
        guard nodeKeyIsTrusted(status.nodeKey, certificate: status.certificate, sender: signer),
              frame.hasValidSignature(by: status.nodeKey),
              mode == .duo || (status.certificate.map { certificate in
                  keyshare.groupId.map { [UInt8]($0) == certificate.groupID } ?? true
              } ?? false)
        else { throw .messageAuthenticationFailed(party: .node(signer)) }
        guard status.keyID == keyshare.keyID, status.entries.map(\.id.bytes) == ids else {
            throw .protocolViolation(party: .node(signer))
        }
        return status.entries.map(\.state)
    }
}
