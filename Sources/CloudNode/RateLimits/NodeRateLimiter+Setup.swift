import MPCCrypto
import SilentShardCore

/// The step runners' use of ``NodeRateLimiter``: what a SETUP costs its principal, device key and key.
extension NodeRateLimiter {
    /// After a SETUP was refused: a DEVICE_SIGNATURE_INVALID counts against the device key it named.
    func noteRejected(_ rejection: SetupRejection, setupMessage: [UInt8], principal: String) {
        guard rejection.code == .deviceSignatureInvalid,
              let frame = (try? Frame.parseBundle(setupMessage))?.first,
              let payload = try? SetupPayload(bytes: frame.body)
        else { return }
        deviceSignatureFailed(payload.deviceKey, principal: principal)
    }

    /// After authorization (§9.5): RATE_LIMITED while the device key is limited for failed signatures,
    /// for a keygen or import past the principal's hourly count (an admitted one is counted), or for a
    /// sign or preSign beyond the key's concurrent signing sessions. Returns the key id whose signing
    /// place the session now holds (release it with ``endSigning(keyID:)`` when the step ends), or nil.
    func admit(_ setup: ValidatedSetup, principal: String) throws(SetupRejection) -> String? {
        if case .limited(let retryAfter) = checkDevice(setup.deviceKey.identity, principal: principal) {
            throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        }
        if setup.operation == .keygen || setup.operation == .import,
           case .limited(let retryAfter) = startKeyCreation(principal: principal) {
            throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        }
        guard setup.operation == .sign || setup.operation == .preSign, let setupKeyID = setup.payload.keyID else { return nil }
        let keyID = setupKeyID.hex
        if case .limited(let retryAfter) = startSigning(keyID: keyID) {
            throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        }
        return keyID
    }
}
