import MPCCrypto
import MPCProtocols

/// The finish math of preSignFinal (`docs/protocol/session.md` §8.4, §13.8 items 2–3), per algorithm, in the two
/// halves the app and node X call: the app (the requester, party 0) computes its finish, which goes into the
/// FINAL_REQUEST, and combines X's finish from the FINAL_RESPONSE into the signature; X computes its own finish
/// only after the app's combines with it into a signature that verifies under P′ (a bad app finish is refused
/// and, inside X's consuming transaction, consumes nothing: `docs/protocol/session.md` §8.3).
///
/// ECDSA is DKLs23's round 3 and combine (`docs/protocol/dkls23.md` §13.5–13.7, ``DKLsSignFinish``); EdDSA is
/// FROST's round 2 and aggregation with the nonces and round-1 commitments exchanged at preSign
/// (`docs/protocol/frost.md` §10.2–10.3, ``FROSTSignRounds``; the app's part is its 64-byte round-2 message,
/// `docs/protocol/session.md` §13.8 item 3). Pure values: no I/O, no clock. Bad input is a typed error, never a
/// trap.
package enum PreSignFinalExchange {
    /// Why node X refuses to finish (each is one wire code at the node).
    package enum Refusal: Error, Sendable, Equatable {
        /// The app's part has the wrong size, or (ECDSA) names another message than the request's outer m, or the
        /// message is too long (MALFORMED).
        case malformedRequest
        /// The stored half is not of the row's key, generation or party (INTERNAL: the node's own data).
        case storedHalfMismatch
        /// The stored half or the app's round-1 data do not decode, or X's own finish failed (MALFORMED).
        case protocolFailure(ProtocolError)
        /// The app's part does not combine with X's into a signature that verifies (SIGNATURE_FAILED).
        case signatureFailed
    }

    /// The app's half: its finish on the message and the combine of X's answer.
    package struct Requester: Sendable, SecretReflecting {
        private enum Combine: Sendable {
            case dkls(DKLsSignFinish)
            case frost(FROSTSignRounds)
        }

        private let combine: Combine
        /// The co-signer X (1 or 2).
        package let signer: PartyIndex
        /// The app's finish, the FINAL_REQUEST's last field: ECDSA the 128-byte round-3 broadcast, EdDSA the
        /// 64-byte round-2 message (transcript ‖ z).
        package let finish: [UInt8]

        /// ECDSA: round 3 of the app's `presignature` (consumed) on the 32-byte `messageHash`; its binding to the
        /// key was checked when its record was read (`docs/protocol/session.md` §8.2).
        package init(dkls presignature: DKLsPresignature, messageHash: [UInt8], signer: PartyIndex) throws(ProtocolError) {
            let own = try DKLsSignFinish(presignature: presignature, messageHash: messageHash)
            combine = .dkls(own)
            finish = own.payload
            self.signer = signer
        }

        /// EdDSA: round 2 of signing `message` along the soft `path` with the app's stored `nonces` (consumed) and
        /// X's round-1 commitments of preSign (`signerRound1`, 64 bytes).
        package init(frost keyshare: FROST.Keyshare, nonces: FROST.Presignature, signer: PartyIndex, signerRound1: [UInt8],
                     message: [UInt8], path: [UInt32]) throws(ProtocolError) {
            var rounds = try FROSTSignRounds(keyshare: keyshare, signers: [0, signer], message: message, path: path,
                                             nonces: nonces)
            finish = try rounds.round2(commitments: [(signer, signerRound1)])
            combine = .frost(rounds)
            self.signer = signer
        }

        /// X's finish (the FINAL_RESPONSE's plaintext) combined with the app's: the signature, verified under P′.
        /// A finish of the wrong size, of another session or message is `abort` / `signingFailed` naming X; a
        /// signature that does not verify `signingFailed`.
        package func signature(signerFinish: [UInt8]) throws(ProtocolError) -> SessionSignature {
            switch combine {
            case .dkls(let own):
                return .ecdsa(try own.combine(peerFinish: signerFinish, from: signer))
            case .frost(var rounds):
                return .eddsa(try rounds.signature(shares: [(signer, signerFinish)]))
            }
        }
    }

    /// Node X's half: X's finish, returned only after the app's part combined with it into a valid signature.
    package enum Signer {
        /// ECDSA: X's round 3 of its stored presignature (`stored`, `DKLsPresignature.serialized()`, of `keyID`,
        /// `generation`, party `local`) on `message`, after the app's 128-byte `requesterFinish` (whose m must be
        /// `message`) combined with it into a signature verified under P′.
        package static func dkls(stored: [UInt8], keyID: [UInt8], generation: [UInt8], local: PartyIndex, message: [UInt8],
                                 requesterFinish: [UInt8]) throws(Refusal) -> [UInt8] {
            guard message.count == 32, DKLsSignFinish.isFinish(requesterFinish, on: message) else { throw .malformedRequest }
            let presignature: DKLsPresignature
            do { presignature = try DKLsPresignature.deserialize(stored) } catch { throw .protocolFailure(error) }
            guard presignature.partyIndex == local, presignature.keyId == keyID, presignature.generation == generation else {
                throw .storedHalfMismatch
            }
            let own: DKLsSignFinish
            do { own = try DKLsSignFinish(presignature: presignature, messageHash: message) } catch { throw .protocolFailure(error) }
            do { _ = try own.combine(peerFinish: requesterFinish, from: 0) } catch { throw .signatureFailed }
            return own.payload
        }

        /// EdDSA: X's round 2 with its stored nonces (`nonces`, `FROST.Presignature.serialized()` of `keyshare`, which
        /// must be X's share of the row's key and generation: the caller checked) and the app's round-1 commitments
        /// of preSign (`requesterRound1`), on `message` along `path`, after the app's 64-byte `requesterShare`
        /// aggregated with it into a signature that verifies under PK′.
        package static func frost(keyshare: FROST.Keyshare, nonces: [UInt8], path: [UInt32], requesterRound1: [UInt8],
                                  message: [UInt8], requesterShare: [UInt8]) throws(Refusal) -> [UInt8] {
            let presignature: FROST.Presignature
            do { presignature = try FROST.Presignature.deserialize(nonces, keyshare: keyshare) } catch { throw .protocolFailure(error) }
            guard message.count <= SessionConstants.maximumEdDSAMessageByteCount, requesterShare.count == 64 else {
                throw .malformedRequest
            }
            var rounds: FROSTSignRounds
            let own: [UInt8]
            do {
                rounds = try FROSTSignRounds(keyshare: keyshare, signers: [0, keyshare.party], message: message, path: path,
                                             nonces: presignature)
                own = try rounds.round2(commitments: [(0, requesterRound1)])
            } catch {
                throw .protocolFailure(error)
            }
            do { _ = try rounds.signature(shares: [(0, requesterShare)]) } catch { throw .signatureFailed }
            return own
        }
    }
}
