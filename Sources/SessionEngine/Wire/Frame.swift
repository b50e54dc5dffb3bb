import MPCCrypto
import MPCProtocols

/// One frame as it travels (`docs/protocol/session.md` §3.1): header, then
/// * signed kinds: payload ‖ signature[64];
/// * P2P: ciphertext[len] ‖ tag[16] (`body` = ciphertext ‖ tag);
/// * FINAL kinds: nonce[24] ‖ ciphertext[len] ‖ tag[16] (`nonce`, `body` = ciphertext ‖ tag).
///
/// A parsed `Frame` is only structurally valid: nothing in it is authenticated yet.
package struct Frame: Sendable, Equatable {
    package let header: FrameHeader
    /// Signed kinds: the payload. Encrypted kinds: ciphertext ‖ tag.
    package let body: [UInt8]
    /// Signed kinds: the 64-byte signature; encrypted kinds: empty.
    package let signature: [UInt8]
    /// FINAL kinds: the 24-byte nonce; otherwise empty.
    package let nonce: [UInt8]

    /// A signed frame from its parts.
    package init(header: FrameHeader, payload: [UInt8], signature: [UInt8]) {
        self.header = header
        self.body = payload
        self.signature = signature
        self.nonce = []
    }

    /// An encrypted frame from its parts.
    package init(header: FrameHeader, nonce: [UInt8] = [], sealed: [UInt8]) {
        self.header = header
        self.body = sealed
        self.signature = []
        self.nonce = nonce
    }

    /// Whether the frame carries a signature (rather than an AEAD tag).
    package var isSigned: Bool { header.kind.trailerByteCount == 64 }

    /// `header ‖ payload`, the bytes signatures and `setup_hash` cover (signed kinds).
    package var headerAndPayload: [UInt8] { header.encoded() + body }

    /// The wire bytes.
    package func encoded() -> [UInt8] {
        header.encoded() + nonce + body + signature
    }

    /// Parses one frame at the start of `bytes` (session.md §3.5 step 1): header checks, then enough bytes for
    /// the payload and authenticator. Returns the frame and its length.
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(SessionError) -> (frame: Frame, byteCount: Int) {
        let header = try FrameHeader.decode(bytes.prefix(FrameHeader.byteCount))
        let kind = header.kind
        let total = FrameHeader.byteCount + kind.prefixByteCount + Int(header.length) + kind.trailerByteCount
        guard bytes.count >= total else { throw .malformed }
        let start = bytes.startIndex + FrameHeader.byteCount
        let nonce = Array(bytes[start..<start + kind.prefixByteCount])
        let bodyStart = start + kind.prefixByteCount
        if header.kind.trailerByteCount == 64 {
            let payload = Array(bytes[bodyStart..<bodyStart + Int(header.length)])
            let signature = Array(bytes[bodyStart + Int(header.length)..<bytes.startIndex + total])
            return (Frame(header: header, payload: payload, signature: signature), total)
        }
        let sealed = Array(bytes[bodyStart..<bytes.startIndex + total])
        return (Frame(header: header, nonce: nonce, sealed: sealed), total)
    }

    /// Parses exactly one frame (HTTP bodies): trailing bytes are MALFORMED.
    package static func parseSingle(_ bytes: [UInt8]) throws(SessionError) -> Frame {
        guard bytes.count <= SessionConstants.maximumBundleByteCount else { throw .tooLarge }
        let (frame, count) = try parse(bytes[...])
        guard count == bytes.count else { throw .malformed }
        return frame
    }

    /// Parses a transport message: one or more complete frames back to back (session.md §2.1), at most 1 MiB and
    /// 64 frames (session.md §3.6, TOO_LARGE). An empty message is MALFORMED.
    package static func parseBundle(_ bytes: [UInt8]) throws(SessionError) -> [Frame] {
        guard bytes.count <= SessionConstants.maximumBundleByteCount else { throw .tooLarge }
        guard !bytes.isEmpty else { throw .malformed }
        var frames: [Frame] = []
        var offset = 0
        while offset < bytes.count {
            guard frames.count < SessionConstants.maximumFramesPerBundle else { throw .tooLarge }
            let (frame, count) = try parse(bytes[offset...])
            frames.append(frame)
            offset += count
        }
        return frames
    }

    /// Concatenates frames into one transport message.
    package static func bundle(_ frames: [Frame]) -> [UInt8] {
        frames.flatMap { $0.encoded() }
    }
}

// MARK: - Signed frames

extension Frame {
    /// The signing label for a signed frame's kind, or nil for encrypted kinds.
    static func label(for kind: FrameKind) -> SigningLabel? {
        switch kind.authenticator {
        case .deviceKey: return .setup
        case .nodeKey(let label): return label
        case .sessionKey: return .frame
        case .pointToPoint, .final, .bearerToken: return nil
        }
    }

    /// `sigmsg(label, header ‖ payload)` for this frame.
    package var signingInput: [UInt8] {
        SessionHash.signingInput(Self.label(for: header.kind) ?? .frame, headerAndPayload)
    }

    /// Builds a header for `payload` (length filled in).
    static func header(kind: FrameKind, sender: PartyIndex, receiver: PartyIndex, tag: UInt16, seq: UInt32,
                       instanceID: InstanceID, payload: [UInt8]) -> FrameHeader {
        FrameHeader(kind: kind, sender: sender, receiver: receiver, tag: tag, seq: seq,
                    length: UInt32(payload.count), instanceID: instanceID)
    }

    /// A frame signed with an Ed25519 key (session key: label `frame`; node key: `accept`, `reject`,
    /// `link`, `export` by kind).
    package static func signed(header: FrameHeader, payload: [UInt8], key: Ed25519.SigningKey) -> Frame {
        let label = Self.label(for: header.kind) ?? .frame
        let signature = key.signature(for: SessionHash.signingInput(label, header.encoded() + payload))
        return Frame(header: header, payload: payload, signature: signature)
    }

    /// Whether the signature verifies under an Ed25519 key (strict).
    package func hasValidSignature(by key: Ed25519.VerifyingKey) -> Bool {
        isSigned && key.isValidSignature(signature, for: signingInput)
    }
}
