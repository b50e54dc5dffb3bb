import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The duo export, `POST /v3/{ecdsa|eddsa}/export` (`docs/protocol/session.md` §2.2, §9.3), called by the app's
/// **backend** with its own bearer credential.
///
/// * Body: exactly one SETUP frame (operation export, receiver 1, no session keys, `export_key`), signed by the
///   key's registered device key. The server has already verified the token.
/// * Checks: the admission stages of `AdmissionPlans.exportPost` — the session.md §9.5 limits before the
///   signature, the same validation as a WebSocket step (a failed device signature counted), the credential
///   (scope `export`, device binding: FORBIDDEN), bans, the key's owner and share (KEY_NOT_FOUND alike), the
///   registered device (DEVICE_NOT_REGISTERED), the durable replay store, the generation. First failure → a
///   signed REJECT (HTTP 200); 400 only when the body does not even hold a SETUP header.
/// * Answer: EXPORT_RESPONSE (`setup_hash ‖ key_id ‖ gen ‖ u8 1 ‖ epk ‖ ct`), signed by the node key; the
///   share is encrypted to `export_key` (dkls23.md §16, exporter 1 → receiver 0, E = {0, 1}), so the backend
///   relays it without learning anything. Audited (operation `export`; never key material).
extension NodeStepRunner {
    func exportPost(_ post: PostRequest) async -> PostResponse {
        let body = [UInt8](post.body)
        // No frame header: nothing to bind a REJECT to (session.md §2.2: 400 when no frame can be produced).
        guard let header = try? FrameHeader.decode(body.prefix(FrameHeader.byteCount)), header.kind == .setup else {
            return PostResponse(status: 400, body: Data("unparsable export request\n".utf8))
        }
        let context = SetupValidationContext(token: .accepted, mode: .duo, algorithm: post.route.algorithm, operation: .export,
                                             params: post.params, nodeIndex: 1, servedOperations: [.export],
                                             cloudKey: party.nodeKey.verifyingKey.bytes, groupID: nil,
                                             isExportPost: true, now: clock())
        // Export POSTs come from the app's backend, one address for all its users: counted per principal (the key's
        // owner) and per (principal, device key) only, never per address (review of finding 4).
        var request = SetupRequest(message: body, context: context, principal: post.principal, address: nil)
        let plan = AdmissionPlans.exportPost(at: self)
        var admitted = false
        do throws(SetupRejection) {
            try await plan.admit(&request)
            admitted = true
            let setup = try request.setup()
            guard let share = request.current else { throw SetupRejection(.internalError) }
            let response = try await exportResponse(setup, share: share)
            await auditExport(setup, outcome: "exported to the app (subject \(post.principal.subject))")
            return PostResponse(body: Data(response.encoded()))
        } catch {
            // The stages saw the admission's own refusal; the export's (sealing) they see here.
            if admitted { await plan.refused(request, error) }
            let binding = request.rejectBinding
            return PostResponse(body: Data(rejectFrame(error, instanceID: binding.instanceID,
                                                       setupHash: binding.setupHash).encoded()))
        }
    }

    /// The signed EXPORT_RESPONSE for an admitted export SETUP over this node's `share`.
    private func exportResponse(_ setup: ValidatedSetup, share: NodeKeyshare) async throws(SetupRejection) -> Frame {
        let fields = try Self.exportFields(setup)
        guard let blob = try? NodeShareBlob(bytes: share.bytes) else { throw SetupRejection(.internalError) }
        let (instanceID, setupHash, algorithm) = (setup.instanceID, setup.setupHash, setup.algorithm)
        let message: [UInt8]
        do {
            message = try await SessionCompute.run {
                try Self.exportMessage(algorithm: algorithm, protocolBytes: blob.protocolBytes, keyID: fields.keyID,
                                       gen: fields.gen, receiverKey: fields.receiverKey, instanceID: instanceID,
                                       setupHash: setupHash)
            }
        } catch let rejection as SetupRejection {
            throw rejection
        } catch {
            throw SetupRejection(.internalError)
        }
        let payload = ExportResponsePayload(setupHash: setupHash, keyID: fields.keyID, gen: fields.gen, party: 1,
                                            exportMessage: message).encoded
        let header = FrameHeader(kind: .exportResponse, sender: 1, receiver: 0, length: UInt32(payload.count),
                                 instanceID: instanceID)
        return Frame.signed(header: header, payload: payload, key: party.nodeKey)
    }

    /// The export message (`DuoExportExchange`'s node half: epk ‖ AEAD(s_1) for receiver 0, E = {0, 1},
    /// dkls23.md §16 / frost.md §12.2). A stored share that does not decode or does not match the SETUP's key is
    /// INTERNAL; an unusable `export_key` (all-zero X25519 result) is INVALID_PARAMETER.
    static func exportMessage(algorithm: SessionAlgorithm, protocolBytes: [UInt8], keyID: KeyID, gen: Generation,
                              receiverKey: X25519.PublicKey, instanceID: InstanceID,
                              setupHash: SetupHash) throws(SetupRejection) -> [UInt8] {
        var rng = SecureRandom()
        do {
            return try DuoExportExchange.exportMessage(algorithm: algorithm, protocolBytes: protocolBytes, keyID: keyID,
                                                       gen: gen, receiverKey: receiverKey, instanceID: instanceID,
                                                       setupHash: setupHash, using: &rng)
        } catch {
            switch error {
            case .storedShareMismatch: throw SetupRejection(.internalError)
            case .unusableReceiverKey: throw SetupRejection(.invalidParameter)
            }
        }
    }
}
