import MPCCrypto
import MPCProtocols

/// The REJECT payload (`docs/protocol/session.md` §4.5), frozen in every session version:
/// `u16 code ‖ u32 retry_after_s ‖ setup_hash (32) ‖ node_key (32) ‖ u8 has_cert ‖ [certificate] ‖
/// u16 detail_len ‖ detail (≤ 512)`, signed by the node key (label `reject`).
package struct RejectPayload: Sendable, Equatable {
    package var code: WireCode
    package var retryAfterSeconds: UInt32
    /// Zeros if none.
    package var setupHash: SetupHash
    package var nodeKey: Ed25519.VerifyingKey
    package var certificate: NodeCertificate?
    /// Code-specific binary, never secret (session.md §10).
    package var detail: [UInt8]

    package init(code: WireCode, retryAfterSeconds: UInt32 = 0, setupHash: SetupHash?, nodeKey: Ed25519.VerifyingKey,
                certificate: NodeCertificate? = nil, detail: [UInt8] = []) {
        self.code = code
        self.retryAfterSeconds = retryAfterSeconds
        self.setupHash = setupHash ?? .unbound
        self.nodeKey = nodeKey
        self.certificate = certificate
        self.detail = Array(detail.prefix(SessionConstants.maximumRejectDetailByteCount))
    }

    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.append(uint16: code.rawValue)
        writer.append(uint32: retryAfterSeconds)
        writer.append(setupHash.bytes)
        writer.append(nodeKey.bytes)
        writer.append(uint8: certificate == nil ? 0 : 1)
        if let certificate { writer.append(certificate.encoded) }
        let bounded = detail.prefix(SessionConstants.maximumRejectDetailByteCount)
        writer.append(uint16: UInt16(bounded.count))
        writer.append(bounded)
        return writer.bytes
    }

    /// Strict decoding; any deviation is MALFORMED (unknown codes decode: they map by class).
    package init(bytes: [UInt8]) throws(SessionError) {
        var reader = WireReader(bytes)
        code = WireCode(rawValue: try reader.readUInt16())
        retryAfterSeconds = try reader.readUInt32()
        setupHash = SetupHash(checked: try reader.read(SetupHash.byteCount))
        guard let key = try? Ed25519.VerifyingKey(bytes: try reader.read(32)) else { throw .malformed }
        nodeKey = key
        switch try reader.readUInt8() {
        case 0: certificate = nil
        case 1: certificate = try? NodeCertificate(bytes: try reader.read(NodeCertificate.byteCount))
            if certificate == nil { throw .malformed }
        default: throw .malformed
        }
        let length = Int(try reader.readUInt16())
        guard length <= SessionConstants.maximumRejectDetailByteCount else { throw .malformed }
        detail = try reader.read(length)
        try reader.finish()
    }

    /// The signed REJECT frame (receiver 0, seq 0; `instanceID` zeros if the SETUP was unparsable).
    package func frame(sender: PartyIndex, instanceID: InstanceID?, nodeSigningKey: Ed25519.SigningKey) -> Frame {
        let payload = encoded()
        let header = FrameHeader(kind: .reject, sender: sender, receiver: 0, length: UInt32(payload.count),
                                 instanceID: instanceID ?? .unbound)
        return Frame.signed(header: header, payload: payload, key: nodeSigningKey)
    }

    /// The app's view of a REJECT (session.md §4.5): `authenticated` only if the signature verifies under the
    /// node key the app trusts for that sender (duo: `cloudVerifyingKey`, or a valid certificate
    /// chained to it) and the REJECT is bound to this session: its `setup_hash` is the app's, or — for an
    /// `UNSUPPORTED_VERSION` to a SETUP the node could not parse — its header echoes this session's
    /// `instance_id`. An unauthenticated REJECT is still reported but MUST NOT trigger a downgrade or a
    /// clock adjustment.
    package func sessionError(frame: Frame, trustedNodeKey: Ed25519.VerifyingKey?,
                             expectedSetupHash: SetupHash, expectedInstanceID: InstanceID) -> SessionError {
        let signed = trustedNodeKey.map { $0 == nodeKey && frame.hasValidSignature(by: $0) } ?? false
        // A node that cannot parse a SETUP of an unknown version has no setup_hash to bind (zeros), but it
        // echoes the instance_id whenever the 48-byte header arrived (`RejectedSetup.instanceID`). A REJECT
        // bound to neither (zero instance_id) could be replayed into any session: it is only ever reported
        // unauthenticated (security review 2, finding 12).
        let bound = setupHash == expectedSetupHash
            || (code == .unsupportedVersion && setupHash == .unbound
                && expectedInstanceID != .unbound && frame.header.instanceID == expectedInstanceID)
        let authenticated = signed && bound
        if authenticated, let nodeTime = nodeTimeDetail { return .nodeClock(nodeTime, by: frame.header.sender) }
        if authenticated, code == .keyRetired, let retired = try? KeyRetiredDetail(bytes: detail) {
            return .keyRetired(retired, by: frame.header.sender)
        }
        if retryAfterSeconds > 0 {
            return .retryLater(code, afterSeconds: retryAfterSeconds, by: frame.header.sender, authenticated: authenticated)
        }
        return .reported(code, by: frame.header.sender, blamed: nil, authenticated: authenticated)
    }

    /// STALE_TIMESTAMP / UNSUPPORTED_VERSION / STALE_GENERATION details (session.md §10).
    package var nodeTimeDetail: UInt64? {
        guard code == .staleTimestamp, detail.count == 8 else { return nil }
        var reader = WireReader(detail)
        return try? reader.readUInt64()
    }

    /// UNSUPPORTED_VERSION's detail: the session versions and the keyshare protocol versions the node speaks
    /// (`u8 count ‖ versions ‖ u8 count ‖ versions`, session.md §10); nil if the detail does not have that layout.
    package var supportedVersionsDetail: (session: [UInt8], protocol: [UInt8])? {
        guard code == .unsupportedVersion else { return nil }
        var reader = WireReader(detail)
        guard let sessionCount = try? reader.readUInt8(), let session = try? reader.read(Int(sessionCount)),
              let protocolCount = try? reader.readUInt8(), let versions = try? reader.read(Int(protocolCount)),
              reader.remaining == 0
        else { return nil }
        return (Array(session), Array(versions))
    }
}
