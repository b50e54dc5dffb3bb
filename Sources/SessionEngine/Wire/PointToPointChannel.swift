import MPCCrypto
import MPCProtocols

/// Point-to-point encryption between two participants of one session (`docs/protocol/session.md` §3.3):
/// `k_{S→R} = Hs("p2p"; setup_hash, u8(S), u8(R), xpk_S, xpk_R, ss)`, ChaCha20-Poly1305 IETF with
/// nonce `0x00^8 ‖ u32(seq)` and associated data `"SilentShard/v3/p2p" ‖ 0x00 ‖ header`.
package struct PointToPointChannel: Sendable, SecretReflecting {
    /// This party.
    package let local: PartyIndex
    /// The other party.
    package let peer: PartyIndex
    private let sendKey: [UInt8]
    private let receiveKey: [UInt8]

    /// Derives both directions' keys. A small-order peer key (all-zero X25519 output) is
    /// BAD_AUTHENTICATOR, as is `local == peer`.
    package init(local: PartyIndex, localKey: X25519.PrivateKey, peer: PartyIndex, peerKey: X25519.PublicKey,
                setupHash: SetupHash) throws(SessionError) {
        guard local != peer else { throw .badAuthenticator }
        guard let shared = try? localKey.sharedSecret(with: peerKey) else { throw .badAuthenticator }
        let localPublic = localKey.publicKey.bytes
        self.local = local
        self.peer = peer
        sendKey = SessionHash.hash("p2p", setupHash.bytes, [local], [peer], localPublic, peerKey.bytes, shared)
        receiveKey = SessionHash.hash("p2p", setupHash.bytes, [peer], [local], peerKey.bytes, localPublic, shared)
    }

    static func nonce(seq: UInt32) -> [UInt8] {
        var writer = WireWriter()
        writer.append([UInt8](repeating: 0, count: 8))
        writer.append(uint32: seq)
        return writer.bytes
    }

    static func associatedData(header: FrameHeader) -> [UInt8] {
        Array("SilentShard/v3/p2p".utf8) + [0] + header.encoded()
    }

    /// Encrypts a protocol message to the peer as a P2P frame. The caller assigns `seq` (from its
    /// `OutgoingSequencer`) and MUST NOT reuse it for another plaintext.
    package func seal(_ plaintext: [UInt8], tag: UInt16, seq: UInt32, instanceID: InstanceID) throws(SessionError) -> Frame {
        guard plaintext.count <= FrameKind.pointToPoint.maximumPayloadByteCount else { throw .tooLarge }
        let header = FrameHeader(kind: .pointToPoint, sender: local, receiver: peer, tag: tag, seq: seq,
                                 length: UInt32(plaintext.count), instanceID: instanceID)
        guard let sealed = try? ChaCha20Poly1305.seal(plaintext, key: sendKey, nonce: Self.nonce(seq: seq),
                                                      associatedData: Self.associatedData(header: header))
        else { throw .detected(.internalError, blamed: nil) }
        return Frame(header: header, sealed: sealed)
    }

    /// Decrypts a P2P frame from the peer to this party: BAD_AUTHENTICATOR on any mismatch (direction,
    /// seq, header, key, ciphertext).
    package func open(_ frame: Frame) throws(SessionError) -> [UInt8] {
        let header = frame.header
        guard header.kind == .pointToPoint, header.sender == peer, header.receiver == local,
              frame.body.count == Int(header.length) + ChaCha20Poly1305.tagByteCount,
              let plaintext = try? ChaCha20Poly1305.open(frame.body, key: receiveKey, nonce: Self.nonce(seq: header.seq),
                                                         associatedData: Self.associatedData(header: header))
        else { throw .badAuthenticator }
        return plaintext
    }
}

extension PointToPointChannel: CustomStringConvertible {
    package var description: String { "PointToPointChannel(\(local)→\(peer))" }
}
