import MPCCrypto
import MPCProtocols

/// One participant's per-session keys (`docs/protocol/session.md` §1.4): an Ed25519 pair signing the session's
/// frames (label `frame`) and an X25519 pair for the point-to-point keys. Drawn fresh per session,
/// erased with it (the value goes out of scope; Swift arrays cannot be reliably zeroed).
package struct SessionKeyPair: Sendable, SecretReflecting {
    /// Signs frames.
    package let signingKey: Ed25519.SigningKey
    /// Derives point-to-point keys.
    package let agreementKey: X25519.PrivateKey

    /// Fresh keys from the CSPRNG.
    package init() {
        signingKey = Ed25519.SigningKey()
        agreementKey = X25519.PrivateKey()
    }

    /// Keys from given values (tests and vectors).
    package init(signingKey: Ed25519.SigningKey, agreementKey: X25519.PrivateKey) {
        self.signingKey = signingKey
        self.agreementKey = agreementKey
    }

    /// The public half, as SETUP/ACCEPT carry it.
    package var publicKeys: SessionPublicKeys {
        SessionPublicKeys(signingKey: signingKey.verifyingKey, agreementKey: agreementKey.publicKey)
    }

    /// A frame of a session-key kind (BCAST, READY, COMMIT, OUTCOME, ABORT, DONE, STORED) signed
    /// over `sigmsg("frame", header ‖ payload)`. The caller takes `seq` from its `OutgoingSequencer`.
    package func signedFrame(kind: FrameKind, sender: PartyIndex, receiver: PartyIndex, tag: UInt16 = 0, seq: UInt32,
                            instanceID: InstanceID, payload: [UInt8]) throws(SessionError) -> Frame {
        guard kind.authenticator == .sessionKey, kind.allows(sender: sender, receiver: receiver),
              payload.count <= kind.maximumPayloadByteCount
        else { throw .invalidParameter }
        let header = FrameHeader(kind: kind, sender: sender, receiver: receiver, tag: tag, seq: seq,
                                 length: UInt32(payload.count), instanceID: instanceID)
        return Frame.signed(header: header, payload: payload, key: signingKey)
    }
}

extension SessionKeyPair: CustomStringConvertible {
    package var description: String { "SessionKeyPair(\(Hex.encode(signingKey.verifyingKey.bytes)))" }
}

/// A participant's public session keys: `Ed25519 pk (32) ‖ X25519 pk (32)` on the wire.
package struct SessionPublicKeys: Sendable, Equatable {
    package static let byteCount = 64
    /// Verifies the participant's frames.
    package let signingKey: Ed25519.VerifyingKey
    /// The participant's X25519 public key.
    package let agreementKey: X25519.PublicKey

    package init(signingKey: Ed25519.VerifyingKey, agreementKey: X25519.PublicKey) {
        self.signingKey = signingKey
        self.agreementKey = agreementKey
    }

    /// Decodes the 64-byte field. The Ed25519 key must be a valid, non-small-order point; any X25519
    /// key decodes (a weak one fails at agreement with `BAD_AUTHENTICATOR`, session.md §3.3).
    package init(bytes: [UInt8]) throws(SessionError) {
        guard bytes.count == Self.byteCount,
              let signing = try? Ed25519.VerifyingKey(bytes: bytes[0..<32]),
              let agreement = try? X25519.PublicKey(bytes: Array(bytes[32..<64]))
        else { throw .invalidParameter }
        signingKey = signing
        agreementKey = agreement
    }

    /// The 64-byte field.
    package var bytes: [UInt8] { signingKey.bytes + agreementKey.bytes }
}
