import MPCCrypto
import SessionEngine

/// The step runners' use of ``NodeRateLimiter``: what a SETUP costs its principal, device key and key.
extension NodeRateLimiter {
    /// Before a SETUP's signature is verified (session.md §9.5: a limited device is refused "valid signature or
    /// not"; security review 2, finding 7): RATE_LIMITED while the (principal, device key) it names is limited
    /// for failed signatures, or the principal or `address` for refused requests
    /// (``checkRequestFailures(principal:address:)``). Reads only; STORAGE_FAILURE when the cluster's
    /// database fails. `deviceKey` is the one the unverified SETUP names (``ParsedSetupMessage/unverifiedDeviceKey``):
    /// naming another principal's device key only reaches that (principal, device) window when the token is
    /// that principal's.
    func checkBeforeVerifying(deviceKey: [UInt8]?, principal: Principal?, address: String?) async throws(SetupRejection) {
        if let deviceKey {
            switch await checkDeviceAcrossCluster(deviceKey, principal: principal?.rateLimitKey ?? "") {
            case .allowed?: break
            case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
            case nil: throw SetupRejection(.storageFailure)
            }
        }
        switch await checkRequestFailures(principal: principal, address: address) {
        case .allowed?: break
        case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        case nil: throw SetupRejection(.storageFailure)
        }
    }

    /// After a SETUP was refused: a DEVICE_SIGNATURE_INVALID counts against the (principal, device key)
    /// it named and against the principal and `address` across device keys (in the cluster too,
    /// `NodeRateLimiter+Cluster`).
    func noteRejected(_ rejection: SetupRejection, deviceKey: [UInt8]?, principal: Principal?, address: String?) async {
        guard rejection.code == .deviceSignatureInvalid, let deviceKey else { return }
        await recordDeviceSignatureFailure(deviceKey, principal: principal?.rateLimitKey ?? "")
        await recordRequestFailure(principal: principal, address: address)
    }

    /// After authorization (session.md §9.5): RATE_LIMITED for a keygen, import or hard derivation past the principal's hourly
    /// count (an admitted one is counted; shared by the cluster, STORAGE_FAILURE when its database fails),
    /// or for a sign or preSign beyond the key's concurrent signing sessions (per process). (Failed device
    /// signatures were checked before the SETUP was verified, ``checkBeforeVerifying(deviceKey:principal:address:)``.)
    /// Returns the key id whose signing place the session now holds (release it with
    /// ``endSigning(keyID:)`` when the step ends), or nil.
    func admit(_ setup: ValidatedSetup, principal: String) async throws(SetupRejection) -> String? {
        // The operation table's profile: a hard derivation creates a key (the child) too, counted with keygens and
        // imports (second review finding 8).
        let limit = setup.operation.row.admission.rateLimit
        if limit == .keyCreation {
            switch await startKeyCreationAcrossCluster(principal: principal) {
            case .allowed?: break
            case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
            case nil: throw SetupRejection(.storageFailure)
            }
        }
        guard limit == .signingSession, let setupKeyID = setup.payload.keyID else { return nil }
        let keyID = setupKeyID.hex
        if case .limited(let retryAfter) = startSigning(keyID: keyID) {
            throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
        }
        return keyID
    }
}
