
// Building SETUP (app side): the app signs its SETUP; the node validates it with `SetupValidator` (CloudNode).

extension SetupPayload {
    /// The signed SETUP frame (receiver 0xFF, or 1 for the duo export POST) for a fresh `instanceID`.
    package func signedFrame(instanceID: InstanceID, signer: some MessageSigner,
                            exportPost: Bool = false) async throws -> Frame {
        let payload = encoded()
        guard payload.count <= FrameKind.setup.maximumPayloadByteCount else { throw SessionError.tooLarge }
        let header = FrameHeader(kind: .setup, sender: 0, receiver: exportPost ? 1 : FrameHeader.everyParticipant,
                                 length: UInt32(payload.count), instanceID: instanceID)
        return try await Frame.signedSetup(header: header, payload: payload, signer: signer)
    }
}
