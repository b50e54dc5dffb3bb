import Foundation
import MPCCrypto
import SilentShardCore

/// PRESIG_QUERY → PRESIG_STATUS at node X (`docs/protocol/session.md` §8.6): which of the app's
/// presignatures of one key X still holds, so that the app drops the ones X can no longer finish.
extension NodeStepRunner {
    /// X's answer to its own PRESIG_QUERY: a signed PRESIG_STATUS, or a REJECT (malformed, forbidden,
    /// storage failure). With a `principal` the query is authorized like a preSignFinal (scope
    /// `preSignFinal`: FORBIDDEN; key owner = subject); rows of another device than the principal's binding,
    /// and every id of another subject's key, are reported `unknown` (as for a key the node does not hold).
    func presignatureStatus(_ frame: Frame, principal: Principal?) async -> [UInt8] {
        let queryID = frame.header.instanceID
        guard let query = try? PresignatureQueryPayload(bytes: frame.body) else {
            return rejectFrame(SetupRejection(.malformed), instanceID: queryID, setupHash: nil).encoded()
        }
        let keyId = query.keyID.hex, ids = query.ids.map(\.bytes)
        do {
            let holdings = try await onStoreQueueAny { [store] in
                if let principal {
                    guard principal.allows(KeyAuthorization.scopeName(.preSignFinal)) else { throw SetupRejection(.forbidden) }
                    // Security review 2, finding 9: another subject's key answers like a key this node does not
                    // hold (every id `unknown`), not FORBIDDEN; its rows are not read.
                    guard (try? KeyAuthorization.checkOwner(try store.ownership(keyId: keyId), principal: principal)) != nil else {
                        return ids.map { _ in PresignatureHolding.unknown }
                    }
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
            return payload.frame(sender: party.index, queryID: queryID, nodeSigningKey: party.nodeKey).encoded()
        } catch {
            return rejectFrame(SetupRejection(Self.wireCode(error)), instanceID: queryID, setupHash: nil).encoded()
        }
    }
}
