import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The finish of a FINAL_REQUEST at node X (`docs/protocol/session.md` §8.3–8.4), called inside the consuming
/// store transaction: open the request with `kf_{0→X}`, X's half of ``PreSignFinalExchange`` (X's finish, returned
/// only after the app's part combined with it into a signature that verifies: a bad app finish consumes nothing),
/// seal the FINAL_RESPONSE with `kf_{X→0}`. The math is the app's and the signing runs' (`Session/Runs/`).
extension NodeStepRunner {
    static func finish(_ secret: StoredPresignatureSecret, row: NodePresignature, frame: Frame, local: PartyIndex,
                       frostShare: FROST.Keyshare?) throws -> [UInt8] {
        let keys = try PreSignFinalKeys(signer: local, requestKey: secret.requestKey, responseKey: secret.responseKey)
        let (message, appFinish) = try keys.openRequest(frame)
        let own: [UInt8]
        switch secret.half {
        case .dkls(let presignature):
            own = try refusing { () throws(PreSignFinalExchange.Refusal) in
                try PreSignFinalExchange.Signer.dkls(stored: presignature, keyID: (try? Hex.decode(row.keyId)) ?? [],
                                                   generation: row.gen, local: local, message: message,
                                                   requesterFinish: appFinish)
            }
        case .frost(let path, let appRound1, let nonces):
            guard let keyshare = frostShare, Hex.encode(keyshare.keyId) == row.keyId, keyshare.generation == row.gen,
                  keyshare.party == local
            else { throw SetupRejection(.internalError) }
            let derivation = try DerivationPathBytes(bytes: path)
            own = try refusing { () throws(PreSignFinalExchange.Refusal) in
                try PreSignFinalExchange.Signer.frost(keyshare: keyshare, nonces: nonces, path: derivation.indices,
                                                    requesterRound1: appRound1, message: message, requesterShare: appFinish)
            }
        }
        return try keys.response(presigID: frame.header.instanceID, finish: own).encoded()
    }

    /// X's finish, or the REJECT code of its refusal (`docs/protocol/session.md` §13.8 item 2).
    private static func refusing(_ finish: () throws(PreSignFinalExchange.Refusal) -> [UInt8]) throws(SetupRejection) -> [UInt8] {
        do {
            return try finish()
        } catch {
            switch error {
            case .malformedRequest, .protocolFailure: throw SetupRejection(.malformed)
            case .storedHalfMismatch: throw SetupRejection(.internalError)
            case .signatureFailed: throw SetupRejection(.signatureFailed)
            }
        }
    }
}
