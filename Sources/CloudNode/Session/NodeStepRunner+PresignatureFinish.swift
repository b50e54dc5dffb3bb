import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The finish math of a FINAL_REQUEST at node X (`docs/protocol/session.md` §8.3–8.4), in one place per
/// algorithm, called inside the consuming store transaction: open the request with `kf_{0→X}`, compute X's
/// finish, assemble and verify the signature with the app's (a bad app finish consumes nothing), seal the
/// FINAL_RESPONSE with `kf_{X→0}`.
extension NodeStepRunner {
    static func finish(_ secret: StoredPresignatureSecret, row: NodePresignature, frame: Frame, local: PartyIndex,
                       frostShare: FROST.Keyshare?) throws -> [UInt8] {
        let keys = try PreSignFinalKeys(signer: local, requestKey: secret.requestKey, responseKey: secret.responseKey)
        let (message, appFinish) = try keys.openRequest(frame)
        switch secret.half {
        case .dkls(let presignature):
            return try dklsFinish(presignature, row: row, frame: frame, keys: keys, local: local, message: message,
                                  appFinish: appFinish)
        case .frost(let path, let appRound1, let nonces):
            return try frostFinish(path: path, appRound1: appRound1, nonces: nonces, row: row, frame: frame, keys: keys,
                                   local: local, message: message, appShare: appFinish, keyshare: frostShare)
        }
    }

    /// ECDSA: the app's 128-byte finish fsid ‖ m ‖ w ‖ u, whose m must be the outer m (session.md §8.4).
    static func dklsFinish(_ stored: [UInt8], row: NodePresignature, frame: Frame, keys: PreSignFinalKeys, local: PartyIndex,
                           message: [UInt8], appFinish: [UInt8]) throws -> [UInt8] {
        guard message.count == 32, appFinish.count == 128, Array(appFinish[32..<64]) == message else {
            throw SetupRejection(.malformed)
        }
        let presignature = try DKLsPresignature.deserialize(stored)
        guard presignature.partyIndex == local, Hex.encode(presignature.keyId) == row.keyId,
              presignature.generation == row.gen
        else { throw SetupRejection(.internalError) }
        let (state, own) = try presignature.finish(messageHash: message)
        // The node assembles and verifies the signature (audit); a bad app finish consumes nothing.
        do {
            _ = try state.combine([ProtocolMessage(tag: DKLsTag.signFinish, from: 0, to: nil, payload: appFinish)])
        } catch {
            throw SetupRejection(.signatureFailed)
        }
        return try keys.response(presigID: frame.header.instanceID, finish: own.payload).encoded()
    }

    /// EdDSA: round 2 of FROST signing with the stored nonces and the app's round-1 commitments; the app's share
    /// (transcript ‖ z) is checked by assembling and verifying the signature.
    static func frostFinish(path: [UInt8], appRound1: [UInt8], nonces: [UInt8], row: NodePresignature, frame: Frame,
                            keys: PreSignFinalKeys, local: PartyIndex, message: [UInt8], appShare: [UInt8],
                            keyshare: FROST.Keyshare?) throws -> [UInt8] {
        guard let keyshare, Hex.encode(keyshare.keyId) == row.keyId, keyshare.generation == row.gen, keyshare.party == local
        else { throw SetupRejection(.internalError) }
        let derivation = try DerivationPathBytes(bytes: path)
        let presignature = try FROST.Presignature.deserialize(nonces, keyshare: keyshare)
        guard message.count <= SessionConstants.maximumEdDSAMessageByteCount, appShare.count == 64 else {
            throw SetupRejection(.malformed)
        }
        var session = try FROST.SigningSession(keyshare: keyshare, signers: [0, local], message: message,
                                               path: derivation.indices, presignature: presignature)
        try session.receiveRound1(appRound1, from: 0)
        let own = try session.round2()
        do {
            try session.receiveRound2(appShare, from: 0)
            _ = try session.signature()
        } catch {
            throw SetupRejection(.signatureFailed)
        }
        return try keys.response(presigID: frame.header.instanceID, finish: own).encoded()
    }
}
