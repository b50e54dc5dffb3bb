import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The admission stages of FINAL_REQUEST and PRESIG_QUERY (`docs/protocol/session.md` §8.3, §8.6, §9.5), each one
/// check; which ones a kind runs is chosen in `AdmissionPlans`. Nothing here writes: a refused request leaves no
/// row and no audit line (security review 2, finding 4), only its count (session.md §9.5).
extension NodeStepRunner {
    /// session.md §9.5: a principal or address past the limit of refused requests is RATE_LIMITED before anything is
    /// read, written or relayed (STORAGE_FAILURE when the cluster's database fails).
    var refusalLimits: AdmissionStage<PresignatureRequest> {
        AdmissionStage("refusal limits") { [rateLimiter] (request: inout PresignatureRequest) async throws(SetupRejection) in
            guard let rateLimiter else { return }
            switch await rateLimiter.checkRequestFailures(principal: request.principal, address: request.address) {
            case .allowed?: break
            case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
            case nil: throw SetupRejection(.storageFailure)
            }
        }
    }

    /// session.md §9.5: every refusal from here on — this node's or B's relayed one — counts against the principal
    /// and the address, unless it is the node's own trouble (``NodeRateLimiter/countsAgainstClient(_:)``).
    var countPresignatureRefusals: AdmissionStage<PresignatureRequest> {
        .observing("count refusals") { [rateLimiter] request, rejection in
            guard NodeRateLimiter.countsAgainstClient(rejection.code) else { return }
            await rateLimiter?.recordRequestFailure(principal: request.principal, address: request.address)
        }
    }

    /// A body refused from its header (``PresignatureRequest/Kind/refused(_:)``).
    func refuse(_ code: WireCode) -> AdmissionStage<PresignatureRequest> {
        AdmissionStage("refuse \(code.name)") { (_: inout PresignatureRequest) async throws(SetupRejection) in
            throw SetupRejection(code)
        }
    }

    /// session.md §9.1: what the credential alone decides, whatever the id — scope `preSignFinal` (FORBIDDEN).
    var preSignFinalScope: AdmissionStage<PresignatureRequest> {
        AdmissionStage("scope") { (request: inout PresignatureRequest) async throws(SetupRejection) in
            if let principal = request.principal, !principal.allows(KeyAuthorization.scopeName(.preSignFinal)) {
                throw SetupRejection(.forbidden)
            }
        }
    }

    /// session.md §8.6: the PRESIG_QUERY payload (MALFORMED).
    var queryPayload: AdmissionStage<PresignatureRequest> {
        AdmissionStage("query payload") { (request: inout PresignatureRequest) async throws(SetupRejection) in
            guard let body = request.frame?.body, let query = try? PresignatureQueryPayload(bytes: body) else {
                throw SetupRejection(.malformed)
            }
            request.query = query
        }
    }

    /// session.md §8.3 (security review 2, findings 4 and 9): the presignature read without a write transaction,
    /// and authorized before anything about its state is answered — one the principal may not finish (another
    /// subject's key, another device's binding) is PRESIG_NOT_FOUND, exactly like an id the node never had.
    var presignatureAuthorization: AdmissionStage<PresignatureRequest> {
        AdmissionStage("authorize") { (request: inout PresignatureRequest) async throws(SetupRejection) in
            let (id, principal) = (request.instanceID, request.principal)
            let lookup: PresignatureLookup
            do {
                lookup = try await self.onStoreQueueAny { [store = self.store] () throws -> PresignatureLookup in
                    let lookup = try store.presignatureLookup(id: id.bytes)
                    let keyID: String, device: [UInt8]?
                    switch lookup {
                    case .none: throw NodeStoreError.presignatureNotFound
                    case .held(let id, let deviceKey, _): (keyID, device) = (id, deviceKey)
                    case .finished(let id, _, _): (keyID, device) = (id, nil)
                    }
                    guard let principal else { return lookup }
                    if let binding = principal.deviceBinding, let device, binding != device {
                        throw NodeStoreError.presignatureNotFound
                    }
                    guard (try? KeyAuthorization.checkOwner(try store.ownership(keyId: keyID), principal: principal)) != nil else {
                        throw NodeStoreError.presignatureNotFound
                    }
                    return lookup
                }
            } catch {
                throw SetupRejection(Self.wireCode(error))
            }
            request.lookup = lookup
            if case .held(_, let deviceKey, _) = lookup { request.device = deviceKey }
        }
    }

    /// session.md §8.3: only the key's owner gets this far. A finish record of this very request answers with its
    /// stored response; of another, PRESIG_CONSUMED; an expired row, PRESIG_EXPIRED.
    var presignatureState: AdmissionStage<PresignatureRequest> {
        AdmissionStage("presignature state") { (request: inout PresignatureRequest) async throws(SetupRejection) in
            switch request.lookup {
            case .finished(_, let consumedBy, let response)?:
                guard constantTimeEqual(consumedBy, SHA256.hash(request.body)) else { throw SetupRejection(.presigConsumed) }
                request.storedResponse = response
            case .held(_, _, let expired)?:
                if expired { throw SetupRejection(.presigExpired) }
            case .none?, nil:
                throw SetupRejection(.presigNotFound)
            }
        }
    }

    /// session.md §9.5: while the (principal, device key) of a held presignature is limited for failed
    /// authentications, its FINAL_REQUESTs are RATE_LIMITED, like the device's SETUPs (issue 34 item 3).
    var deviceLimits: AdmissionStage<PresignatureRequest> {
        AdmissionStage("device limits") { [rateLimiter] (request: inout PresignatureRequest) async throws(SetupRejection) in
            guard let rateLimiter, let device = request.device, request.storedResponse == nil else { return }
            switch await rateLimiter.checkDeviceAcrossCluster(device, principal: request.principal?.rateLimitKey ?? "") {
            case .allowed?: break
            case .limited(let retryAfter)?: throw SetupRejection(.rateLimited, retryAfterSeconds: retryAfter)
            case nil: throw SetupRejection(.storageFailure)
            }
        }
    }

    /// session.md §9.5 (issue 34 item 3): a FINAL_REQUEST whose authenticator fails (BAD_AUTHENTICATOR: not sealed
    /// with the presignature's `kf_{0→X}`, which only the device's preSign session derived) counts against the
    /// (principal, device key) as a failed device signature does. (The principal's refusal count is
    /// `countPresignatureRefusals`'.)
    var countAuthenticatorFailures: AdmissionStage<PresignatureRequest> {
        .observing("count authenticator failures") { [rateLimiter] request, rejection in
            guard rejection.code == .badAuthenticator, let device = request.device else { return }
            await rateLimiter?.recordDeviceSignatureFailure(device, principal: request.principal?.rateLimitKey ?? "")
        }
    }

    /// session.md §9.4: a held presignature of a device the store or this process banned is BANNED (issue 34
    /// item 3: the process's own bans too, before its store has them).
    var presignatureBan: AdmissionStage<PresignatureRequest> {
        AdmissionStage("ban") { (request: inout PresignatureRequest) async throws(SetupRejection) in
            guard let device = request.device, request.storedResponse == nil else { return }
            try await self.refuseBanned(device)
        }
    }

    /// session.md §8.3: the request must open with the presignature's `kf_{0→X}` (BAD_AUTHENTICATOR), checked on a
    /// read before the consuming transaction, so that an unauthenticated request writes nothing (issue 34 item 3).
    /// The transaction checks it again.
    var finalRequestAuthenticator: AdmissionStage<PresignatureRequest> {
        AdmissionStage("authenticate") { (request: inout PresignatureRequest) async throws(SetupRejection) in
            guard request.storedResponse == nil, let frame = request.frame else { return }
            let (id, local) = (request.instanceID, self.party.index)
            do {
                try await self.onStoreQueueAny { [store = self.store] () throws in
                    // No row (taken meanwhile) or one of an older epoch: the consuming transaction answers.
                    guard let held = try store.heldPresignatureSecret(id: id.bytes) else { return }
                    let secret = try Self.decodeSecret(held.secret, row: held.presignature, local: local)
                    let keys = try PreSignFinalKeys(signer: local, requestKey: secret.requestKey, responseKey: secret.responseKey)
                    _ = try keys.openRequest(frame)
                }
            } catch {
                throw SetupRejection(Self.wireCode(error))
            }
        }
    }

    /// The stored secret of `row` at this node (INTERNAL if it is not this node's or does not decode).
    static func decodeSecret(_ bytes: [UInt8], row: NodePresignature, local: PartyIndex) throws(SetupRejection)
        -> StoredPresignatureSecret {
        guard row.party == local, let secret = try? StoredPresignatureSecret(bytes: bytes) else {
            throw SetupRejection(.internalError)
        }
        return secret
    }
}
