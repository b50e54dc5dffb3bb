import SessionEngine

/// What a node's REJECT of an unvalidated SETUP message binds to (session.md §4.5), for duo and trio alike.
enum RejectedSetup {
    /// The SETUP's `setup_hash` if the message parsed as a SETUP frame (so the app can authenticate the
    /// REJECT, e.g. to correct its clock after STALE_TIMESTAMP); nil (zeros on the wire) otherwise.
    static func setupHash(of message: [UInt8]) -> SetupHash? {
        guard let (frame, _) = try? Frame.parse(message[...]), frame.header.kind == .setup else { return nil }
        return SessionHash.setupHash(headerAndPayload: frame.headerAndPayload)
    }

    /// The instance id of an unparsable SETUP if its header is readable, else zeros (session.md §4.5). A header of a
    /// session version this node does not speak still has `instance_id` at its frozen offset (session.md §3.1, §11):
    /// it is echoed, so the app can authenticate the UNSUPPORTED_VERSION (security review 2, finding 12).
    static func instanceID(of message: [UInt8]) -> InstanceID {
        let headerBytes = message.prefix(FrameHeader.byteCount)
        do {
            let header = try FrameHeader.decode(headerBytes)
            return header.kind == .setup ? header.instanceID : .unbound
        } catch .detected(.unsupportedVersion, _) {
            // The first two bytes (version, kind) are frozen in every version: only a SETUP's header is echoed.
            guard headerBytes.count == FrameHeader.byteCount,
                  headerBytes[headerBytes.startIndex + 1] == FrameKind.setup.rawValue
            else { return .unbound }
            let start = headerBytes.startIndex + FrameHeader.instanceIDOffset
            return InstanceID(checked: Array(headerBytes[start ..< start + InstanceID.byteCount]))
        } catch {
            return .unbound
        }
    }
}
