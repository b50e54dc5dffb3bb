import SilentShardCore

/// What a node's REJECT of an unvalidated SETUP message binds to (session.md §4.5), for duo and trio alike.
enum RejectedSetup {
    /// The SETUP's `setup_hash` if the message parsed as a SETUP frame (so the app can authenticate the
    /// REJECT, e.g. to correct its clock after STALE_TIMESTAMP); nil (zeros on the wire) otherwise.
    static func setupHash(of message: [UInt8]) -> SetupHash? {
        guard let (frame, _) = try? Frame.parse(message[...]), frame.header.kind == .setup else { return nil }
        return SessionHash.setupHash(headerAndPayload: frame.headerAndPayload)
    }

    /// The instance id of an unparsable SETUP if its header is readable, else zeros (session.md §4.5).
    static func instanceID(of message: [UInt8]) -> InstanceID {
        guard let header = try? FrameHeader.decode(message.prefix(FrameHeader.byteCount)), header.kind == .setup else {
            return .unbound
        }
        return header.instanceID
    }
}
