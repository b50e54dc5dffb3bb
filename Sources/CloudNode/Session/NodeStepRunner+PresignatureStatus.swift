import Foundation
import MPCCrypto
import SessionEngine

/// PRESIG_QUERY → PRESIG_STATUS at node X (`docs/protocol/session.md` §8.6): which of the app's
/// presignatures of one key X still holds, so that the app drops the ones X can no longer finish.
extension NodeStepRunner {
    /// X's answer to its own PRESIG_QUERY, admitted (payload, scope `preSignFinal`): a signed PRESIG_STATUS, or a
    /// refusal (storage failure). Rows of another device than the principal's binding, and every id of another
    /// subject's key, are reported `unknown` (as for a key the node does not hold; security review 2, finding 9:
    /// its rows are not read).
    func presignatureStatus(_ request: PresignatureRequest) async -> Result<[UInt8], SetupRejection> {
        guard let query = request.query else { return .failure(SetupRejection(.internalError)) }
        let keyId = query.keyID.hex, ids = query.ids.map(\.bytes), principal = request.principal
        do {
            let holdings = try await onStoreQueueAny { [store] in
                if let principal,
                   (try? KeyAuthorization.checkOwner(try store.ownership(keyId: keyId), principal: principal)) == nil {
                    return ids.map { _ in PresignatureHolding.unknown }
                }
                return try store.presignatureHoldings(keyId: keyId, ids: ids)
            }
            let entries = zip(query.ids, holdings).map { id, holding -> PresignatureStatusPayload.Entry in
                switch holding {
                case .unknown:
                    return .init(id: id, state: .unknown, expiresAtMilliseconds: 0)
                case .consumed:
                    return .init(id: id, state: .consumed, expiresAtMilliseconds: 0)
                case .held(let expiresAt, let expired, let deviceKey):
                    if let binding = principal?.deviceBinding, binding != deviceKey {
                        return .init(id: id, state: .unknown, expiresAtMilliseconds: 0)
                    }
                    let (milliseconds, overflow) = UInt64(max(0, expiresAt)).multipliedReportingOverflow(by: 1000)
                    return .init(id: id, state: expired ? .expired : .held,
                                 expiresAtMilliseconds: overflow ? UInt64.max : milliseconds)
                }
            }
            let payload = PresignatureStatusPayload(nodeKey: party.nodeKey.verifyingKey, certificate: party.certificate,
                                                    keyID: query.keyID, entries: entries)
            return .success(payload.frame(sender: party.index, queryID: request.instanceID, nodeSigningKey: party.nodeKey).encoded())
        } catch {
            return .failure(SetupRejection(Self.wireCode(error)))
        }
    }
}
