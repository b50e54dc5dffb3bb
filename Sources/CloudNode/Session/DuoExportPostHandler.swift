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
/// * Checks (session.md §4.3), first failure → a signed REJECT frame (HTTP 200): frame and TLV, route, cluster,
///   timestamp window, device signature, replay store (the **same** window as the runner's WebSocket
///   steps), field rules; then `KeyAuthorization` (scope `export`, device binding, key owner = token
///   subject: FORBIDDEN), bans, the share
///   (KEY_NOT_FOUND, algorithm), the registered device key (DEVICE_NOT_REGISTERED), the generation
///   (STALE_GENERATION, detail: the node's gen).
/// * Answer: HTTP 200 + EXPORT_RESPONSE (`setup_hash ‖ key_id ‖ gen ‖ u8 1 ‖ epk ‖ ct`), signed by the
///   node key under label `export`; the share is encrypted to `export_key` (dkls23.md §16, exporter 1 →
///   receiver 0, E = {0, 1}), so the backend relays it without learning anything.
/// * 400 only when the body does not even hold a frame header (no instance id to answer to).
///
/// Store reads run on the runner's store queues and the encryption on `SessionCompute`: nothing
/// blocks Swift's cooperative pool. Every answer to a device-signed SETUP leaves an audit line
/// (operation `export`, key id, device, outcome, token subject; never key material).
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
                                                           principal: request.principal, algorithm: request.route.algorithm)
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
            setup = try runner.replay.withLock { (window: inout ReplayWindow) throws(SetupRejection) in
                try SetupValidator.validate(message: body, context: context, replay: &window).setup
            }
        } catch {
            // Not audited: the bytes are not authenticated by any device key.
            return reject(error, instanceID: header.instanceID, setupHash: RejectedSetup.setupHash(of: body))
        }
        let keyID = setup.payload.keyID?.hex
        let device = "device:" + Hex.encode(setup.deviceKey.identity)
        do throws(SetupRejection) {
            // Step 9: the backend credential must carry scope `export` (session.md §9.1, §9.3), any device binding must
            // be this SETUP's device, and (in `export`) the key's owner must be its subject (session.md §9.2).
            try KeyAuthorization.checkCredential(request.principal, operation: .export, deviceKey: setup.deviceKey.identity)
            let response = try await export(setup, principal: request.principal)
            await audit(keyId: keyID, device: device, outcome: "exported to the app (subject \(request.principal.subject))")
            return PostResponse(body: Data(response.encoded()))
        } catch {
            await audit(keyId: keyID, device: device, outcome: "rejected \(error.code.name)")
            return reject(error, instanceID: setup.instanceID, setupHash: setup.setupHash)
        }
    }

    // MARK: - Steps 9–10 and the export message

    /// The share, checked against the SETUP, and the signed EXPORT_RESPONSE frame.
    private func export(_ setup: ValidatedSetup, principal: Principal) async throws(SetupRejection) -> Frame {
        guard let setupKeyID = setup.payload.keyID, let gen = setup.payload.gen, let exportKey = setup.payload.exportKey,
              let receiverKey = try? X25519.PublicKey(bytes: exportKey)
        else { throw SetupRejection(.invalidParameter) }
        let keyID = setupKeyID.hex
        let deviceIdentity = setup.deviceKey.identity
        let state: (banned: Bool, share: NodeKeyshare?, owner: KeyOwnership)
        let instance = setup.instanceID, now = runner.clock(), retention = runner.replayRetentionMilliseconds
        do {
            state = try await runner.onStoreQueue { [store = runner.store] () throws(NodeStoreError) in
                // session.md §9.6: the durable replay store, shared with the WebSocket steps.
                try store.recordSessionInstance(instance, nowMilliseconds: now, retentionMilliseconds: retention)
                return (try store.isBanned(deviceKey: deviceIdentity), try store.share(keyId: keyID), try store.ownership(keyId: keyID))
            }
        } catch .replay {
            throw SetupRejection(.replay)
        } catch {
            throw SetupRejection(.storageFailure)
        }
        if state.banned { throw SetupRejection(.banned) }
        try KeyAuthorization.checkOwner(state.owner, principal: principal)
        let expectedKind = StoredShareKind(setup.algorithm)
        guard let share = state.share, share.kind == expectedKind else { throw SetupRejection(.keyNotFound) }
        guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw SetupRejection(.internalError) }
        guard blob.deviceIdentity == deviceIdentity else { throw SetupRejection(.deviceNotRegistered) }
        guard share.gen == gen.bytes else {
            throw await runner.generationMismatch(keyId: keyID, appGen: gen.bytes, current: share.gen, prepared: nil)
        }

        let instanceID = setup.instanceID, setupHash = setup.setupHash, algorithm = setup.algorithm
        let message: [UInt8]
        do {
            message = try await SessionCompute.run {
                try Self.exportMessage(algorithm: algorithm, protocolBytes: blob.protocolBytes, keyID: setupKeyID,
                                       gen: gen, receiverKey: receiverKey, instanceID: instanceID, setupHash: setupHash)
            }
        } catch let rejection as SetupRejection {
            throw rejection
        } catch {
            throw SetupRejection(.internalError)
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
