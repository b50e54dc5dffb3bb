import MPCCrypto
import SilentShardCore

/// The step runners' use of ``NodeRateLimiter``: what a SETUP costs its principal, device key and key.
extension NodeRateLimiter {
    /// After a SETUP was refused: a DEVICE_SIGNATURE_INVALID counts against the (principal, device key)
    /// it named (in the cluster too, `NodeRateLimiter+Cluster`).
    func noteRejected(_ rejection: SetupRejection, setupMessage: [UInt8], principal: String) async {
        guard rejection.code == .deviceSignatureInvalid,
              let frame = (try? Frame.parseBundle(setupMessage))?.first,
              let payload = try? SetupPayload(bytes: frame.body)
        else { return }
        await recordDeviceSignatureFailure(payload.deviceKey, principal: principal)
    }

    /// After authorization (session.md §9.5): RATE_LIMITED while the (principal, device key) is limited for failed
    /// signatures, for a keygen, import or hard derivation past the principal's hourly count (an admitted one is counted),
    /// or for a sign or preSign beyond the key's concurrent signing sessions (per process). The first two
    /// are shared by the cluster; when its database fails they refuse with STORAGE_FAILURE. Returns the
    /// key id whose signing place the session now holds (release it with ``endSigning(keyID:)`` when the
    /// step ends), or nil.
    func admit(_ setup: ValidatedSetup, principal: String) async throws(SetupRejection) -> String? {
        switch await checkDeviceAcrossCluster(setup.deviceKey.identity, principal: principal) {
        case .allowed?: break
        case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        case nil: throw SetupRejection(.storageFailure)
        }
        // A hard derivation creates a key (the child) too: counted with keygens and imports (second review finding 8).
        if setup.operation == .keygen || setup.operation == .import || setup.operation == .hardDerivation {
            switch await startKeyCreationAcrossCluster(principal: principal) {
            case .allowed?: break
            case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
            case nil: throw SetupRejection(.storageFailure)
            }
        }
        guard setup.operation == .sign || setup.operation == .preSign, let setupKeyID = setup.payload.keyID else { return nil }
        let keyID = setupKeyID.hex
        if case .limited(let retryAfter) = startSigning(keyID: keyID) {
            throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        }
        return keyID
    }
}
