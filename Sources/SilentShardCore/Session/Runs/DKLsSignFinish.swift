import MPCCrypto
import MPCProtocols

/// One signer's DKLs23 finish of a presignature on a 32-byte message hash and its combine with the co-signers'
/// finishes (`docs/protocol/dkls23.md` §13.5 round 3, §13.6 combine, §13.7 assembly and verification under P′).
/// The one place this math is called from the session layer: the WebSocket signing run (``DKLsSignRun``), the
/// app's preSignFinal and node X's answer to a FINAL_REQUEST (``PreSignFinalExchange``, `docs/protocol/session.md`
/// §8.4) all finish and combine through it. A pure value: no I/O; making it consumes the presignature
/// (`DKLsPresignature` is single use, `docs/protocol/dkls23.md` §13.9).
package struct DKLsSignFinish: Sendable, SecretReflecting {
    /// The finish broadcast's size: fsid ‖ m ‖ w ‖ u (`docs/protocol/dkls23.md` §13.5 step 3).
    package static let finishByteCount = 128
    /// This signer's finish broadcast (tag `signFinish`).
    package let message: ProtocolMessage
    private let state: DKLsSign.FinishState
    private let messageHash: [UInt8]

    /// Round 3 of `presignature` on `messageHash` (exactly 32 bytes). With `keyshare`, the presignature must be
    /// of that keyshare's key, generation and party (`presignatureMismatch`); without, the caller checked the
    /// binding when it stored and loaded the presignature (`docs/protocol/session.md` §8.2–8.3).
    package init(presignature: DKLsPresignature, messageHash: [UInt8], keyshare: DKLsKeyshare? = nil) throws(ProtocolError) {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidMessageHash) }
        let finished = if let keyshare {
            try presignature.finish(messageHash: messageHash, keyshare: keyshare)
        } else {
            try presignature.finish(messageHash: messageHash)
        }
        (state, message) = finished
        self.messageHash = messageHash
    }

    /// This signer's finish payload (fsid ‖ m ‖ w ‖ u).
    package var payload: [UInt8] { message.payload }

    /// Whether `payload` has the shape of a co-signer's finish on this finish's message: 128 bytes whose m is
    /// `messageHash` (`docs/protocol/session.md` §8.4: "whose m MUST equal the outer m"). Checked before any
    /// secret is touched.
    package static func isFinish(_ payload: [UInt8], on messageHash: [UInt8]) -> Bool {
        payload.count == finishByteCount && messageHash.count == 32 && Array(payload[32..<64]) == messageHash
    }

    /// Combines the co-signers' finish broadcasts (as received in a step) into the signature, verified under P′
    /// (`docs/protocol/dkls23.md` §13.6–13.7). A wrong fsid is `abort(j)`, another message `signingFailed(j)`, a
    /// signature that does not verify `signingFailed(nil)`.
    package func combine(_ messages: [ProtocolMessage]) throws(ProtocolError) -> Secp256k1.ECDSASignature {
        try state.combine(messages)
    }

    /// Combines co-signer `peer`'s finish payload (carried inside a FINAL_REQUEST or FINAL_RESPONSE) into the
    /// signature. A payload of the wrong size is `abort(peer, malformedMessage)`; otherwise as `combine(_:)`.
    package func combine(peerFinish payload: [UInt8], from peer: PartyIndex) throws(ProtocolError) -> Secp256k1.ECDSASignature {
        guard payload.count == Self.finishByteCount else { throw .abort(party: peer, reason: .malformedMessage) }
        return try state.combine([ProtocolMessage(tag: DKLsTag.signFinish, from: peer, to: nil, payload: payload)])
    }
}
