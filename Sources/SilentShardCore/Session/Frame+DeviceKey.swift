
// A frame and the app's device key (the seeds' `MessageSigner`): the SETUP is the one frame it signs
// (session.md §1.2).

extension Frame {
    /// A SETUP frame signed by the device key.
    package static func signedSetup(header: FrameHeader, payload: [UInt8], signer: some MessageSigner) async throws -> Frame {
        let signature = try await signer.sign(label: .setup, header.encoded() + payload)
        return Frame(header: header, payload: payload, signature: signature)
    }

    /// Whether the signature verifies under a device key.
    package func hasValidSignature(by key: DeviceKey) -> Bool {
        isSigned && key.isValidSignature(signature, for: signingInput)
    }
}
