import MPCCrypto
import MPCProtocols

/// The preSignFinal key pair of one presignature (`docs/protocol/session.md` §8.1, §8.4), derived during the
/// preSign session from the session X25519 keys and kept inside both presignature halves:
/// `kf_{0→X} = Hs("final"; setup_hash, u8(0), u8(X), xpk_0, xpk_X, ss)` and `kf_{X→0}` (arguments
/// swapped). FINAL frames are `header ‖ nonce[24] ‖ XChaCha20-Poly1305(ciphertext ‖ tag)` with
/// associated data `"SilentShard/v3/final" ‖ 0x00 ‖ header`.
package struct PreSignFinalKeys: Sendable, SecretReflecting {
    /// The signer node, 1 or 2.
    package let signer: PartyIndex
    /// `kf_{0→X}`: FINAL_REQUEST.
    let requestKey: [UInt8]
    /// `kf_{X→0}`: FINAL_RESPONSE.
    let responseKey: [UInt8]

    /// Derives both keys on either side: `local` is this party (0 or the signer), `peer` the other.
    package init(local: PartyIndex, localKey: X25519.PrivateKey, peer: PartyIndex, peerKey: X25519.PublicKey,
                setupHash: SetupHash) throws(SessionError) {
        guard (local == 0) != (peer == 0), local == 0 || local <= 2, peer == 0 || peer <= 2
        else { throw .invalidParameter }
        guard let shared = try? localKey.sharedSecret(with: peerKey) else { throw .badAuthenticator }
        let (appPublic, signerPublic) = local == 0 ? (localKey.publicKey.bytes, peerKey.bytes)
                                                   : (peerKey.bytes, localKey.publicKey.bytes)
        signer = local == 0 ? peer : local
        requestKey = SessionHash.hash("final", setupHash.bytes, [0], [signer], appPublic, signerPublic, shared)
        responseKey = SessionHash.hash("final", setupHash.bytes, [signer], [0], signerPublic, appPublic, shared)
    }

    /// Restores stored keys (from a presignature half).
    package init(signer: PartyIndex, requestKey: [UInt8], responseKey: [UInt8]) throws(SessionError) {
        guard signer == 1 || signer == 2, requestKey.count == 32, responseKey.count == 32 else { throw .invalidParameter }
        self.signer = signer
        self.requestKey = requestKey
        self.responseKey = responseKey
    }

    /// The stored form: `kf_{0→X} ‖ kf_{X→0}` (secret).
    package var storedKeys: (request: [UInt8], response: [UInt8]) { (requestKey, responseKey) }

    static func associatedData(_ header: FrameHeader) -> [UInt8] {
        Array("SilentShard/v3/final".utf8) + [0] + header.encoded()
    }

    /// The FINAL_REQUEST frame (0 → X, tag 0x1301, seq 0, `instance_id` = presig_id). Plaintext:
    /// `u32 len(m) ‖ m ‖ the app's finish`. `nonce` is fresh random unless a test pins it.
    package func request(presigID: InstanceID, message: [UInt8], finish: [UInt8],
                        nonce: [UInt8] = SecureRandom.bytes(count: 24)) throws(SessionError) -> Frame {
        var writer = WireWriter()
        writer.append(uint32: UInt32(message.count))
        writer.append(message)
        writer.append(finish)
        return try seal(kind: .finalRequest, sender: 0, receiver: signer, key: requestKey, presigID: presigID,
                        plaintext: writer.bytes, nonce: nonce)
    }

    /// The FINAL_RESPONSE frame (X → 0) carrying X's finish.
    package func response(presigID: InstanceID, finish: [UInt8],
                         nonce: [UInt8] = SecureRandom.bytes(count: 24)) throws(SessionError) -> Frame {
        try seal(kind: .finalResponse, sender: signer, receiver: 0, key: responseKey, presigID: presigID,
                 plaintext: finish, nonce: nonce)
    }

    /// Opens a FINAL_REQUEST at the signer: `(m, finish)`. BAD_AUTHENTICATOR on any mismatch;
    /// MALFORMED if the authenticated plaintext does not split.
    package func openRequest(_ frame: Frame) throws(SessionError) -> (message: [UInt8], finish: [UInt8]) {
        let plaintext = try open(frame, kind: .finalRequest, sender: 0, receiver: signer, key: requestKey)
        var reader = WireReader(plaintext)
        let length = Int(try reader.readUInt32())
        let message = try reader.read(length)
        return (message, reader.readRest())
    }

    /// Opens a FINAL_RESPONSE at the app: X's finish.
    package func openResponse(_ frame: Frame) throws(SessionError) -> [UInt8] {
        try open(frame, kind: .finalResponse, sender: signer, receiver: 0, key: responseKey)
    }

    private func seal(kind: FrameKind, sender: PartyIndex, receiver: PartyIndex, key: [UInt8], presigID: InstanceID,
                      plaintext: [UInt8], nonce: [UInt8]) throws(SessionError) -> Frame {
        guard plaintext.count <= kind.maximumPayloadByteCount else { throw .tooLarge }
        guard nonce.count == 24 else { throw .invalidParameter }
        let header = FrameHeader(kind: kind, sender: sender, receiver: receiver, tag: ProtocolTagRegistry.finishTag,
                                 length: UInt32(plaintext.count), instanceID: presigID)
        guard let sealed = try? XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce,
                                                       associatedData: Self.associatedData(header))
        else { throw .detected(.internalError, blamed: nil) }
        return Frame(header: header, nonce: nonce, sealed: sealed)
    }

    private func open(_ frame: Frame, kind: FrameKind, sender: PartyIndex, receiver: PartyIndex,
                      key: [UInt8]) throws(SessionError) -> [UInt8] {
        let header = frame.header
        guard header.kind == kind, header.sender == sender, header.receiver == receiver,
              header.tag == ProtocolTagRegistry.finishTag, frame.nonce.count == 24,
              frame.body.count == Int(header.length) + XChaCha20Poly1305.tagByteCount,
              let plaintext = try? XChaCha20Poly1305.open(frame.body, key: key, nonce: frame.nonce,
                                                          associatedData: Self.associatedData(header))
        else { throw .badAuthenticator }
        return plaintext
    }
}

extension PreSignFinalKeys: CustomStringConvertible {
    package var description: String { "PreSignFinalKeys(signer \(signer))" }
}
