import SessionEngine

/// The admission stages of a SETUP-carrying request (`docs/protocol/session.md` §4.3, §9), each one check or one
/// thing taken. Which ones a request kind runs, and in which order, is chosen in `AdmissionPlans`.
extension NodeStepRunner {
    /// session.md §9.5 before the signature is verified (security review 2, finding 7): a limited (principal,
    /// device key), principal or address is RATE_LIMITED, valid signature or not, with no write. The device key
    /// is the one the decoded, unverified SETUP names.
    var limitsBeforeVerifying: AdmissionStage<SetupRequest> {
        AdmissionStage("limits before verifying") { [rateLimiter] (request: inout SetupRequest) async throws(SetupRejection) in
            try await rateLimiter?.checkBeforeVerifying(deviceKey: request.parsed.unverifiedDeviceKey,
                                                        principal: request.principal, address: request.address)
        }
    }

    /// session.md §9.5: a DEVICE_SIGNATURE_INVALID counts against the (principal, device key) and the principal and
    /// address (security review 2, finding 6: for every request kind that carries a SETUP).
    var countDeviceSignatureFailures: AdmissionStage<SetupRequest> {
        .observing("count device-signature failures") { [rateLimiter] request, rejection in
            await rateLimiter?.noteRejected(rejection, deviceKey: request.parsed.unverifiedDeviceKey,
                                            principal: request.principal, address: request.address)
        }
    }

    /// session.md §4.3 steps 1–8 with the in-memory replay window: the node's one call of `SetupValidator`.
    var validate: AdmissionStage<SetupRequest> {
        AdmissionStage("validate") { [replay] (request: inout SetupRequest) async throws(SetupRejection) in
            let (parsed, context) = (request.parsed, request.context)
            request.validated = try replay.withLock { (window: inout ReplayWindow) throws(SetupRejection) in
                try SetupValidator.validate(parsed, context: context, replay: &window)
            }
        }
    }

    /// session.md §9.6: the instance id into the node's durable replay store (REPLAY; STORAGE_FAILURE).
    var durableReplay: AdmissionStage<SetupRequest> {
        AdmissionStage("durable replay") { (request: inout SetupRequest) async throws(SetupRejection) in
            try await self.recordInstance(try request.setup(), now: request.context.now)
        }
    }

    /// session.md §9.1–9.3 for a WebSocket step (`authorize(_:principal:)`).
    var authorizeStep: AdmissionStage<SetupRequest> {
        AdmissionStage("authorize") { (request: inout SetupRequest) async throws(SetupRejection) in
            request.authorization = try await self.authorize(try request.setup(), principal: request.principal)
        }
    }

    /// session.md §9.5 after authorization: key creations per principal, concurrent signing sessions per key. A
    /// refusal after it gives the signing place back.
    var rateLimits: AdmissionStage<SetupRequest> {
        AdmissionStage("rate limits", admit: { [rateLimiter] (request: inout SetupRequest) async throws(SetupRejection) in
            let setup = try request.setup()
            request.signingKeyID = try await rateLimiter?.admit(setup, principal: request.principal?.rateLimitKey ?? "") ?? nil
        }, refused: { [rateLimiter] request, _ in
            if let keyID = request.signingKeyID { rateLimiter?.endSigning(keyID: keyID) }
        })
    }

    /// session.md §7.2: the key's lease for a share-changing step or reconcile (KEY_BUSY). A refusal after it gives
    /// the lease back.
    var lease: AdmissionStage<SetupRequest> {
        AdmissionStage("lease", admit: { [store, storeQueue, leaseSeconds] (request: inout SetupRequest) async throws(SetupRejection) in
            request.lease = try await KeyLease.acquire(for: try request.setup(), seconds: leaseSeconds, store: store,
                                                       queue: storeQueue)
        }, refused: { [store, storeQueue] request, _ in
            await request.lease?.release(store: store, queue: storeQueue)
        })
    }

    /// session.md §9.4: a device banned by the store or by this process (before the store has it, finding 12) is
    /// refused with BANNED (reconcile never runs this stage).
    var ban: AdmissionStage<SetupRequest> {
        AdmissionStage("ban") { (request: inout SetupRequest) async throws(SetupRejection) in
            try await self.refuseBanned(try request.setup().deviceKey.identity)
        }
    }

    /// session.md §4.3 steps 9–10 from the store: the key's state (`keyState`), or reconcile's status.
    var keyStateStage: AdmissionStage<SetupRequest> {
        AdmissionStage("key state") { (request: inout SetupRequest) async throws(SetupRejection) in
            let setup = try request.setup()
            if setup.operation == .reconcile {
                request.status = try await self.reconcileStatus(setup)
            } else {
                request.current = try await self.keyState(setup, rebind: request.authorization?.rebind ?? false)
            }
        }
    }

    /// Node B: the link A opened belongs to this session only (UNEXPECTED otherwise).
    func sameInstance(as linkInstance: InstanceID) -> AdmissionStage<SetupRequest> {
        AdmissionStage("link instance") { (request: inout SetupRequest) async throws(SetupRejection) in
            guard try request.setup().instanceID == linkInstance else { throw SetupRejection(.unexpected) }
        }
    }

    // MARK: - What the stages do

    /// BANNED for a device the store or this process banned; STORAGE_FAILURE when the store fails.
    func refuseBanned(_ device: [UInt8]) async throws(SetupRejection) {
        let banned: Bool
        do {
            banned = try await onStoreQueue { [store] () throws(NodeStoreError) in try store.isBanned(deviceKey: device) }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        if banned || bans.contains(device) { throw SetupRejection(.banned) }
    }

    /// session.md §9.6: the durable replay store, after the in-memory window passed the SETUP.
    func recordInstance(_ setup: ValidatedSetup, now: UInt64) async throws(SetupRejection) {
        let (store, instance, retention) = (store, setup.instanceID, replayRetentionMilliseconds)
        do {
            try await onStoreQueue { () throws(NodeStoreError) in
                try store.recordSessionInstance(instance, nowMilliseconds: now, retentionMilliseconds: retention)
            }
        } catch .replay {
            throw SetupRejection(.replay)
        } catch {
            throw SetupRejection(.storageFailure)
        }
    }
}
