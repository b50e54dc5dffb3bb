import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Presignatures at a node (`docs/protocol/session.md` §8): the half is stored sealed before STORED
/// (a ``StoredPresignatureSecret``); a FINAL_REQUEST consumes it later (`NodeStepRunner+PreSignFinal.swift`).
extension NodeStepRunner {
    /// session.md §5.4 "preSign result": store the half (one transaction, session.md §8.2), then STORED; a store failure is
    /// ABORT(STORAGE_FAILURE).
    func storePresignature(_ presignature: SessionPresignature, setup: ValidatedSetup, channel: inout PartyFrameChannel,
                           send: SessionDriver.Send) async throws(SilentShardError) -> NodeStepReport {
        let half: StoredPresignatureSecret.Half
        switch presignature {
        case .ecdsa(let presignature):
            guard let bytes = try? presignature.serialized() else { throw .invalidInput(reason: "presignature") }
            half = .dkls(presignature: bytes)
        case .eddsa(let frost):
            guard let bytes = try? frost.presignature.serialized(), frost.peer == 0 else {
                throw .invalidInput(reason: "presignature")
            }
            half = .frost(path: setup.payload.path ?? [0], appRound1: frost.peerRound1, nonces: bytes)
        }
        func abort(_ code: WireCode) async -> NodeStepReport {
            if let frame = try? channel.control(.abort, payload: AbortPayload(code: code, blamed: nil).encoded) {
                try? await send([frame])
            }
            return .failed(.serviceUnavailable(retryAfter: nil))
        }
        guard let keys = try? channel.receiver.preSignFinalKeys(with: 0),
              let keyID = setup.payload.keyID, let gen = setup.payload.gen
        else { return await abort(.internalError) }
        let stored = keys.storedKeys
        guard let secret = try? StoredPresignatureSecret(requestKey: stored.request, responseKey: stored.response,
                                                         half: half).encoded
        else { return await abort(.internalError) }
        let ttl = min(setup.payload.presignTTL ?? SessionConstants.defaultPresignatureTTLSeconds,
                      SessionConstants.maximumPresignatureTTLSeconds)
        let expiresAtSeconds = clock() / 1000 + UInt64(ttl)
        let row = NodePresignature(id: setup.instanceID.bytes, keyId: keyID.hex, gen: gen.bytes, party: party.index,
                                   deviceKey: setup.deviceKey.identity,
                                   expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAtSeconds)), secret: secret)
        do throws(NodeStoreError) {
            try await onStoreQueue { [store] () throws(NodeStoreError) in try store.storePresignature(row) }
        } catch {
            switch error {
            case .presignatureLimit: return await abort(.presignLimit)
            case .banned: return await abort(.banned)
            case .staleGeneration: return await abort(.staleGeneration)
            default: return await abort(.storageFailure)
            }
        }
        let payload = StoredPayload(presigID: setup.instanceID, keyID: keyID, gen: gen, expiresAt: expiresAtSeconds * 1000)
        guard let frame = try? channel.control(.stored, payload: payload.encoded) else { return await abort(.internalError) }
        do { try await send([frame]) } catch { return .failed(error) }
        return .presignatureStored(keyId: keyID.hex)
    }
}
