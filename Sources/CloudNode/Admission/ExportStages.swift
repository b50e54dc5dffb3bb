import MPCCrypto
import SilentShardCore

/// The admission stages only the duo export POST runs (`docs/protocol/session.md` §9.3): it reads the key before
/// anything is written (security review 2, finding 4), so its authorization and key checks come before the
/// durable replay record, and its refusals count against the caller and, once the key's registered device
/// signed, leave an audit line.
extension NodeStepRunner {
    /// session.md §9.5 (security review 2, finding 4): a refusal after validation counts against the principal
    /// (and the address, when known), unless it is the node's own trouble (``NodeRateLimiter/countsAgainstClient(_:)``).
    var countRefusals: AdmissionStage<SetupRequest> {
        .observing("count refusals") { [rateLimiter] request, rejection in
            guard NodeRateLimiter.countsAgainstClient(rejection.code) else { return }
            await rateLimiter?.recordRequestFailure(principal: request.principal, address: request.address)
        }
    }

    /// session.md §9.1, §9.3: the backend credential carries scope `export`, and any device binding is this SETUP's
    /// device (FORBIDDEN).
    var authorizeExportCredential: AdmissionStage<SetupRequest> {
        AdmissionStage("authorize credential") { (request: inout SetupRequest) async throws(SetupRejection) in
            guard let principal = request.principal else { return }
            try KeyAuthorization.checkCredential(principal, operation: .export,
                                                 deviceKey: try request.setup().deviceKey.identity)
        }
    }

    /// The export's own fields: key id, gen and an X25519 `export_key` (INVALID_PARAMETER).
    var exportFields: AdmissionStage<SetupRequest> {
        AdmissionStage("export fields") { (request: inout SetupRequest) async throws(SetupRejection) in
            _ = try Self.exportFields(try request.setup())
        }
    }

    /// session.md §9.2: the key's owner is the principal's subject and this node holds the key with the route's
    /// algorithm (KEY_NOT_FOUND alike, finding 9), registered to this SETUP's device (DEVICE_NOT_REGISTERED).
    var exportKeyState: AdmissionStage<SetupRequest> {
        AdmissionStage("key state") { (request: inout SetupRequest) async throws(SetupRejection) in
            let setup = try request.setup()
            let keyID = try Self.exportFields(setup).keyID.hex
            let state: (share: NodeKeyshare?, owner: KeyOwnership)
            do {
                state = try await self.onStoreQueue { [store = self.store] () throws(NodeStoreError) in
                    (try store.share(keyId: keyID), try store.ownership(keyId: keyID))
                }
            } catch {
                throw SetupRejection(.storageFailure)
            }
            if let principal = request.principal {
                guard (try? KeyAuthorization.checkOwner(state.owner, principal: principal)) != nil else {
                    throw SetupRejection(.keyNotFound)
                }
            }
            guard let share = state.share, share.kind == StoredShareKind(setup.algorithm) else {
                throw SetupRejection(.keyNotFound)
            }
            guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw SetupRejection(.internalError) }
            guard blob.deviceIdentity == setup.deviceKey.identity else { throw SetupRejection(.deviceNotRegistered) }
            request.current = share
        }
    }

    /// From here on the SETUP is the key's registered device's: every refusal leaves an audit line (operation
    /// `export`, key id, device, code; never key material).
    var auditExportRefusals: AdmissionStage<SetupRequest> {
        .observing("audit refusals") { request, rejection in
            guard let setup = request.validated?.setup else { return }
            await self.auditExport(setup, outcome: "rejected \(rejection.code.name)")
        }
    }

    /// session.md §4.3 step 10: the SETUP's gen is the key's current one (STALE_GENERATION; a gen this node never
    /// decided is NODE_BEHIND, second review finding 1).
    var exportGeneration: AdmissionStage<SetupRequest> {
        AdmissionStage("generation") { (request: inout SetupRequest) async throws(SetupRejection) in
            let setup = try request.setup()
            guard let share = request.current else { throw SetupRejection(.internalError) }
            let fields = try Self.exportFields(setup)
            guard share.gen == fields.gen.bytes else {
                throw await self.generationMismatch(keyId: fields.keyID.hex, appGen: fields.gen.bytes, current: share.gen,
                                                    prepared: nil)
            }
        }
    }

    /// The export SETUP's key id, gen and one-time X25519 key (INVALID_PARAMETER if missing or not a key).
    static func exportFields(_ setup: ValidatedSetup) throws(SetupRejection)
        -> (keyID: KeyID, gen: Generation, receiverKey: X25519.PublicKey) {
        guard let keyID = setup.payload.keyID, let gen = setup.payload.gen, let exportKey = setup.payload.exportKey,
              let receiverKey = try? X25519.PublicKey(bytes: exportKey)
        else { throw SetupRejection(.invalidParameter) }
        return (keyID, gen, receiverKey)
    }

    /// One audit line of an export in its own transaction, on the store queue (a failing write does not change the
    /// answer).
    func auditExport(_ setup: ValidatedSetup, outcome: String) async {
        let store = store, keyID = setup.payload.keyID?.hex, device = "device:" + Hex.encode(setup.deviceKey.identity)
        _ = try? await onStoreQueue { () throws(NodeStoreError) in
            store.auditSeparately(SessionOperation.export.name, keyId: keyID, party: device, outcome: outcome)
        }
    }
}
