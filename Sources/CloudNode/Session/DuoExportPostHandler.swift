import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The duo POSTs: the export, `POST /v3/{ecdsa|eddsa}/export` (`docs/protocol/session.md` §2.2, §9.3), called by the
/// app's **backend** with its own bearer credential; and the app's preSignFinal / PRESIG_QUERY,
/// `POST /v3/duo/presign-final` (`/v3/duo/eddsa/presign-final`; session.md §8, duo since v2). Other POST routes go to `fallback`.
///
/// * Body: exactly one SETUP frame (operation export, receiver 1, no session keys, `export_key`),
///   signed by the key's registered device key. The server has already verified the token.
/// * Checks (session.md §4.3), first failure → a signed REJECT frame (HTTP 200): the session.md §9.5 failure
///   limits (before anything is verified), frame and TLV, route, cluster, timestamp window, device signature,
///   replay window (the **same** validation as the runner's WebSocket steps, `validateSetup`), field rules;
///   then `KeyAuthorization` (scope `export`, device binding: FORBIDDEN), bans, the key's owner = token subject
///   and the share (KEY_NOT_FOUND alike, algorithm), the registered device key (DEVICE_NOT_REGISTERED), the
///   durable replay store, the generation (STALE_GENERATION, detail: the node's gen).
/// * Answer: HTTP 200 + EXPORT_RESPONSE (`setup_hash ‖ key_id ‖ gen ‖ u8 1 ‖ epk ‖ ct`), signed by the
///   node key under label `export`; the share is encrypted to `export_key` (dkls23.md §16, exporter 1 →
///   receiver 0, E = {0, 1}), so the backend relays it without learning anything.
/// * 400 only when the body does not even hold a frame header (no instance id to answer to).
///
/// Store reads run on the runner's store queues and the encryption on `SessionCompute`: nothing
/// blocks Swift's cooperative pool. Every answer to a SETUP signed by the key's registered device leaves an
/// audit line (operation `export`, key id, device, outcome, token subject; never key material); refusals
/// before that write nothing (no replay record, no audit line) and count against the principal and the
/// client address (session.md §9.5, security review 2, findings 4 and 6).
package struct DuoExportPostHandler: PostHandler {
    package let runner: NodeStepRunner
    package let fallback: any PostHandler

    /// - Parameters:
    ///   - runner: the node's duo runner (node key, share store, replay window, clock are shared).
    ///   - fallback: serves every other POST route (default: 501).
    package init(runner: NodeStepRunner, fallback: any PostHandler = UnservedPostHandler()) {
        self.runner = runner
        self.fallback = fallback
    }

    package func handle(_ request: PostRequest) async throws -> PostResponse {
        if request.route.mode == .duo, request.route.action == "presign-final" {
            // Duo presignatures (issue 20): the same FINAL_REQUEST / PRESIG_QUERY handling as trio's X.
            guard request.body.count <= FrameHeader.byteCount + 24 + 64 * 1024,
                  let response = await runner.preSignFinal(body: [UInt8](request.body), token: request.token.map { Array($0.utf8) },
                                                           principal: request.principal, algorithm: request.route.algorithm,
                                                           clientAddress: request.clientAddress)
            else { return PostResponse(status: 400, body: Data("unparsable preSignFinal request\n".utf8)) }
            return PostResponse(body: Data(response))
        }
        guard request.route.mode == .duo, request.route.action == "export" else { return try await fallback.handle(request) }
        let body = [UInt8](request.body)
        // No frame header: nothing to bind a REJECT to (session.md §2.2: 400 when no frame can be produced).
        guard let header = try? FrameHeader.decode(body.prefix(FrameHeader.byteCount)), header.kind == .setup else {
            return PostResponse(status: 400, body: Data("unparsable export request\n".utf8))
        }
        let algorithm = request.route.algorithm
        // session.md §4.3 steps 1–8 (the token was checked by the server before this handler ran).
        let context = SetupValidationContext(token: .accepted, mode: .duo, algorithm: algorithm, operation: .export,
                                             params: request.params, nodeIndex: 1, servedOperations: [.export],
                                             cloudKey: runner.party.nodeKey.verifyingKey.bytes, groupID: nil,
                                             isExportPost: true, now: runner.clock())
        let setup: ValidatedSetup
        do {
            // The one SETUP validation of every request kind (security review 2, finding 6): the session.md §9.5
            // limits before the signature is verified, a failed device signature counted like a WebSocket step's.
            // Export POSTs come from the app's backend, one address for all its users: counted per principal (the
            // key's owner) and per (principal, device key) only, never per address, so one user's bad requests
            // cannot refuse everyone's exports (review of finding 4).
            setup = try await runner.validateSetup(body, context: context, principal: request.principal,
                                                   address: nil).setup
        } catch {
            // Not audited: the bytes are not authenticated by any device key.
            return reject(error, instanceID: header.instanceID, setupHash: RejectedSetup.setupHash(of: body))
        }
        let keyID = setup.payload.keyID?.hex
        let device = "device:" + Hex.encode(setup.deviceKey.identity)
        do throws(ExportRefusal) {
            // Step 9: the backend credential must carry scope `export` (session.md §9.1, §9.3), any device binding must
            // be this SETUP's device, and (in `export`) the key's owner must be its subject (session.md §9.2).
            do { try KeyAuthorization.checkCredential(request.principal, operation: .export, deviceKey: setup.deviceKey.identity) }
            catch { throw ExportRefusal(error, audited: false) }
            let response = try await export(setup, principal: request.principal)
            await audit(keyId: keyID, device: device, outcome: "exported to the app (subject \(request.principal.subject))")
            return PostResponse(body: Data(response.encoded()))
        } catch {
            // Security review 2, finding 4: a refusal counts against the principal (not the backend's shared
            // address); only one the key's registered device signed leaves an audit line (nothing else was written
            // for the others).
            if NodeRateLimiter.countsAgainstClient(error.rejection.code) {
                await runner.rateLimiter?.recordRequestFailure(principal: request.principal, address: nil)
            }
            if error.audited { await audit(keyId: keyID, device: device, outcome: "rejected \(error.rejection.code.name)") }
            return reject(error.rejection, instanceID: setup.instanceID, setupHash: setup.setupHash)
        }
    }

    // MARK: - Steps 9–10 and the export message

    /// A refused export: the REJECT, and whether it is audited (the SETUP was signed by the key's registered
    /// device; refusals before that wrote nothing and leave no line).
    private struct ExportRefusal: Error {
        let rejection: SetupRejection
        let audited: Bool

        init(_ rejection: SetupRejection, audited: Bool) {
            self.rejection = rejection
            self.audited = audited
        }

        init(_ code: WireCode, audited: Bool) { self.init(SetupRejection(code), audited: audited) }
    }

    /// The share, checked against the SETUP, and the signed EXPORT_RESPONSE frame. Reads first (security
    /// review 2, finding 4): a refusal before the registered device's signature is established writes nothing;
    /// the durable replay record follows. Another subject's key answers KEY_NOT_FOUND like a key this node
    /// does not hold (finding 9).
    private func export(_ setup: ValidatedSetup, principal: Principal) async throws(ExportRefusal) -> Frame {
        guard let setupKeyID = setup.payload.keyID, let gen = setup.payload.gen, let exportKey = setup.payload.exportKey,
              let receiverKey = try? X25519.PublicKey(bytes: exportKey)
        else { throw ExportRefusal(.invalidParameter, audited: false) }
        let keyID = setupKeyID.hex
        let deviceIdentity = setup.deviceKey.identity
        let state: (banned: Bool, share: NodeKeyshare?, owner: KeyOwnership)
        let instance = setup.instanceID, now = runner.clock(), retention = runner.replayRetentionMilliseconds
        do {
            state = try await runner.onStoreQueue { [store = runner.store] () throws(NodeStoreError) in
                (try store.isBanned(deviceKey: deviceIdentity), try store.share(keyId: keyID), try store.ownership(keyId: keyID))
            }
        } catch {
            throw ExportRefusal(.storageFailure, audited: false)
        }
        if state.banned { throw ExportRefusal(.banned, audited: false) }
        guard (try? KeyAuthorization.checkOwner(state.owner, principal: principal)) != nil else {
            throw ExportRefusal(.keyNotFound, audited: false)
        }
        let expectedKind = StoredShareKind(setup.algorithm)
        guard let share = state.share, share.kind == expectedKind else { throw ExportRefusal(.keyNotFound, audited: false) }
        guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw ExportRefusal(.internalError, audited: false) }
        guard blob.deviceIdentity == deviceIdentity else { throw ExportRefusal(.deviceNotRegistered, audited: false) }
        do {
            // session.md §9.6: the durable replay store, shared with the WebSocket steps.
            try await runner.onStoreQueue { [store = runner.store] () throws(NodeStoreError) in
                try store.recordSessionInstance(instance, nowMilliseconds: now, retentionMilliseconds: retention)
            }
        } catch .replay {
            throw ExportRefusal(.replay, audited: true)
        } catch {
            throw ExportRefusal(.storageFailure, audited: true)
        }
        guard share.gen == gen.bytes else {
            // A gen this node never decided is NODE_BEHIND (a restored node; second review finding 1).
            throw ExportRefusal(await runner.generationMismatch(keyId: keyID, appGen: gen.bytes, current: share.gen, prepared: nil),
                                audited: true)
        }

        let instanceID = setup.instanceID, setupHash = setup.setupHash, algorithm = setup.algorithm
        let message: [UInt8]
        do {
            message = try await SessionCompute.run {
                try Self.exportMessage(algorithm: algorithm, protocolBytes: blob.protocolBytes, keyID: setupKeyID,
                                       gen: gen, receiverKey: receiverKey, instanceID: instanceID, setupHash: setupHash)
            }
        } catch let rejection as SetupRejection {
            throw ExportRefusal(rejection, audited: true)
        } catch {
            throw ExportRefusal(.internalError, audited: true)
        }
        let payload = ExportResponsePayload(setupHash: setupHash, keyID: setupKeyID, gen: gen, party: 1,
                                            exportMessage: message).encoded
        let header = FrameHeader(kind: .exportResponse, sender: 1, receiver: 0, length: UInt32(payload.count),
                                 instanceID: instanceID)
        return Frame.signed(header: header, payload: payload, key: runner.party.nodeKey)
    }

    /// epk ‖ AEAD(s_1) for receiver 0, E = {0, 1} (dkls23.md §16 / its FROST twin). A stored share that
    /// does not decode or does not match the SETUP's key is INTERNAL; a weak `export_key` (all-zero
    /// X25519 result) is INVALID_PARAMETER.
    private static func exportMessage(algorithm: SessionAlgorithm, protocolBytes: [UInt8], keyID: KeyID, gen: Generation,
                                      receiverKey: X25519.PublicKey, instanceID: InstanceID,
                                      setupHash: SetupHash) throws(SetupRejection) -> [UInt8] {
        var rng = SecureRandom()
        switch algorithm {
        case .ecdsa:
            guard let keyshare = try? DKLsKeyshare(serialized: protocolBytes), keyshare.partyIndex == 1,
                  keyshare.keyId == keyID.bytes, keyshare.generation == gen.bytes,
                  let parameters = try? DKLsExport.Parameters(keyshare: keyshare, exporters: [0, 1], receiver: 0,
                                                              receiverKey: receiverKey, instanceId: instanceID.bytes,
                                                              setupHash: setupHash.bytes)
            else { throw SetupRejection(.internalError) }
            guard let message = try? DKLsExport.exportShare(parameters, using: &rng) else {
                throw SetupRejection(.invalidParameter)
            }
            return message.payload
        case .eddsa:
            guard let keyshare = try? FROST.Keyshare(encoded: protocolBytes), keyshare.party == 1,
                  keyshare.keyId == keyID.bytes, keyshare.generation == gen.bytes,
                  let parameters = try? FROST.Export.Sealed.Parameters(keyshare: keyshare, exporters: [0, 1], receiver: 0,
                                                                       receiverKey: receiverKey, instanceId: instanceID.bytes,
                                                                       setupHash: setupHash.bytes)
            else { throw SetupRejection(.internalError) }
            guard let message = try? FROST.Export.Sealed.exportShare(parameters, using: &rng) else {
                throw SetupRejection(.invalidParameter)
            }
            return message
        }
    }

    // MARK: - Helpers

    private func reject(_ rejection: SetupRejection, instanceID: InstanceID, setupHash: SetupHash?) -> PostResponse {
        let payload = RejectPayload(code: rejection.code, retryAfterSeconds: rejection.retryAfterSeconds,
                                    setupHash: setupHash, nodeKey: runner.party.nodeKey.verifyingKey,
                                    detail: rejection.detail)
        let frame = payload.frame(sender: 1, instanceID: instanceID, nodeSigningKey: runner.party.nodeKey)
        return PostResponse(body: Data(frame.encoded()))
    }

    /// One audit line in its own transaction, on the store queue (a failing audit write does not
    /// change the answer).
    private func audit(keyId: String?, device: String?, outcome: String) async {
        let store = runner.store
        _ = try? await runner.onStoreQueue { () throws(NodeStoreError) in
            store.auditSeparately("export", keyId: keyId, party: device, outcome: outcome)
        }
    }
}
