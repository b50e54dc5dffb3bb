import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Duo export (`docs/protocol/session.md` §2.2, §4.2, §4.6, §9.3): the app builds a signed request, its backend
/// relays it to the node's `POST /v3/{algorithm}/export` with the backend's own credential, and the app
/// combines the node's answer with its own share into the whole private key.
extension DuoSession {
    /// Builds the export request for `keyshare`: a SETUP frame (operation export, fresh instance id,
    /// timestamp, key id, generation, a fresh one-time X25519 public key as `export_key`, no session
    /// keys, receiver = the node) signed by the device key. Nothing is sent. Hand
    /// ``DuoExportRequest/body`` to the backend and pass the node's answer to
    /// ``exportCombine(request:response:)``.
    ///
    /// `chainPath` is a soft path ("m" or "m/1/2"): the combine then returns the child's private key
    /// (x + δ, the child chain code). Export is allowed whatever the app's bans (session.md §9.4: it lets the
    /// user move funds). The node refuses a stale generation (`staleKeyshare`): reconcile first.
    public func exportRequest(keyshare: Keyshare, chainPath: String = "m") async throws(SilentShardError) -> DuoExportRequest {
        try check(keyshare)
        _ = try Self.softPath(chainPath)
        let cloudKey: Ed25519.VerifyingKey
        do { cloudKey = try CloudVerifyingKey.parse(core.engine.cloudVerifyingKey) } catch { throw SilentShardError(error) }
        let deviceKey: DeviceKey
        do { deviceKey = try DeviceKey(signer: core.engine.messageSigner) } catch { throw .invalidConfiguration(reason: "device key") }
        let oneTimeKey = X25519.PrivateKey()
        let instanceID = InstanceID.random()
        var setup = SetupPayload(mode: .duo, algorithm: algorithm, operation: .export,
                                 timestamp: sessionMilliseconds, deviceKey: deviceKey,
                                 sessionKeys: nil, cloudKey: cloudKey.bytes, participants: PartySet([0, 1]))
        setup.keyID = keyshare.keyID
        setup.gen = keyshare.gen
        setup.exportKey = oneTimeKey.publicKey.bytes
        let frame: Frame
        do { frame = try await setup.signedFrame(instanceID: instanceID, signer: core.engine.messageSigner, exportPost: true) }
        catch let error as SessionError { throw SilentShardError(error) }
        catch { throw .authenticationFailed(reason: "device signer failed") }
        return DuoExportRequest(keyshare: keyshare, chainPath: chainPath, body: Data(frame.encoded()), instanceID: instanceID,
                                setupHash: SessionHash.setupHash(headerAndPayload: frame.headerAndPayload),
                                oneTimeKey: oneTimeKey)
    }

    /// Combines the node's answer to `request` (the response body the backend relayed: one
    /// EXPORT_RESPONSE frame, or a REJECT frame) with the app's share. Checks, in order: one frame;
    /// a REJECT becomes its typed error (`deviceNotRegistered`, `staleKeyshare`, `authorizationDenied`,
    /// `replayDetected`, …); sender, receiver and instance id are the request's; the node signature
    /// under `cloudVerifyingKey` (`messageAuthenticationFailed`); setup hash, key id, generation and
    /// party; then decryption with the one-time key, s_1·G = S_1 and x·G = P (`abortProtocol`).
    ///
    /// Consumes `request`: a second call fails with `invalidInput` whatever the first one returned.
    public func exportCombine(request: DuoExportRequest, response: Data) throws(SilentShardError) -> ExportedKey {
        guard request.algorithm == algorithm, request.keyshare.mode == .duo else {
            throw .invalidInput(reason: "export request of another session")
        }
        guard let oneTimeKey = request.consume() else { throw .invalidInput(reason: "export request already used") }
        let cloudKey: Ed25519.VerifyingKey
        do { cloudKey = try CloudVerifyingKey.parse(core.engine.cloudVerifyingKey) } catch { throw SilentShardError(error) }
        let frame = try Self.exportResponseFrame(response, request: request, cloudKey: cloudKey)
        let payload: ExportResponsePayload
        do { payload = try ExportResponsePayload(bytes: frame.body) } catch { throw SilentShardError(error, frameSender: 1) }
        let keyshare = request.keyshare
        guard payload.setupHash == request.setupHash, payload.keyID == keyshare.keyID,
              payload.gen == keyshare.gen, payload.party == 1
        else { throw .protocolViolation(party: .node(1)) }
        return try Self.combine(keyshare: keyshare, chainPath: request.chainPath, oneTimeKey: oneTimeKey,
                                message: payload.exportMessage, instanceID: request.sessionInstance,
                                setupHash: request.setupHash)
    }

    /// Export in one call: builds the request, hands it to `relay` (the app's call to its backend,
    /// which POSTs ``DuoExportRequest/body`` to the node and returns the response body), combines.
    /// A failure thrown by `relay` is mapped like a transport failure (`network`, `cancelled`).
    /// A refusal a step would be retried after (KEY_BUSY, a stale timestamp) is retried the same way, with a fresh
    /// request each time (session.md §13.8 item 6), so `relay` may be called more than once.
    public func export(keyshare: Keyshare, chainPath: String = "m",
                       via relay: (DuoExportRequest) async throws -> Data) async throws(SilentShardError) -> ExportedKey {
        try await core.observed(.export, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.retryingPost { () throws(SilentShardError) in
                try await exportAttempt(keyshare: keyshare, chainPath: chainPath, via: relay)
            }
        }
    }

    /// One export attempt: a fresh request, relayed, combined.
    private func exportAttempt(keyshare: Keyshare, chainPath: String,
                               via relay: (DuoExportRequest) async throws -> Data) async throws(SilentShardError) -> ExportedKey {
        let request = try await exportRequest(keyshare: keyshare, chainPath: chainPath)
        let response: Data
        let start = ContinuousClock.now
        do { response = try await relay(request) } catch {
            let failure = Self.networkError(error)
            core.recordPost(.export, keyId: keyshare.keyId, sent: request.body.count, received: 0,
                            duration: ContinuousClock.now - start, error: failure)
            throw failure
        }
        core.recordPost(.export, keyId: keyshare.keyId, sent: request.body.count, received: response.count,
                        duration: ContinuousClock.now - start, error: nil)
        return try exportCombine(request: request, response: response)
    }

    // MARK: - Steps

    /// The path's indices; hardened indices and bad syntax are `invalidInput`.
    private static func softPath(_ text: String) throws(SilentShardError) -> [UInt32] {
        do { return try DerivationPath(text).indices } catch { throw .invalidInput(reason: "invalid chain path") }
    }

    /// The single authenticated EXPORT_RESPONSE frame of `response`, or the typed error it stands for.
    private static func exportResponseFrame(_ response: Data, request: DuoExportRequest,
                                            cloudKey: Ed25519.VerifyingKey) throws(SilentShardError) -> Frame {
        let frames: [Frame]
        do { frames = try Frame.parseBundle([UInt8](response)) } catch { throw SilentShardError(error, frameSender: 1) }
        guard frames.count == 1, let frame = frames.first else { throw .malformedMessage(party: .node(1)) }
        let header = frame.header
        let instanceID = request.sessionInstance
        guard header.sender == 1, header.receiver == 0 else { throw .protocolViolation(party: .node(1)) }
        switch header.kind {
        case .reject:
            // A REJECT to an unparsable SETUP carries zeros (session.md §4.5); it is reported, flagged by
            // `RejectPayload.sessionError` as authenticated only if signed and bound to our setup hash or instance id.
            guard header.instanceID == instanceID || header.instanceID == .unbound else {
                throw .protocolViolation(party: .node(1))
            }
            let reject: RejectPayload
            do { reject = try RejectPayload(bytes: frame.body) } catch { throw SilentShardError(error, frameSender: 1) }
            throw SilentShardError(reject.sessionError(frame: frame, trustedNodeKey: cloudKey,
                                                       expectedSetupHash: request.setupHash,
                                                       expectedInstanceID: instanceID))
        case .exportResponse:
            guard header.instanceID == instanceID, header.tag == 0, header.seq == 0 else {
                throw .protocolViolation(party: .node(1))
            }
            guard frame.hasValidSignature(by: cloudKey) else { throw .messageAuthenticationFailed(party: .node(1)) }
            return frame
        default:
            throw .protocolViolation(party: .node(1))
        }
    }

    /// Decrypts the node's share, checks it and the result (dkls23.md §16 steps 3–4, frost.md §12.2), applies the
    /// soft path (`DuoExportExchange`'s app half), and returns the key with its own consistency check.
    private static func combine(keyshare: Keyshare, chainPath: String, oneTimeKey: X25519.PrivateKey, message: [UInt8],
                                instanceID: InstanceID, setupHash: SetupHash) throws(SilentShardError) -> ExportedKey {
        _ = try softPath(chainPath)
        do {
            let receiver = try DuoExportExchange.Receiver(keyshare: keyshare, chainPath: chainPath, oneTimeKey: oneTimeKey,
                                                          instanceID: instanceID, setupHash: setupHash)
            return try receiver.key(from: message)
        } catch {
            throw SilentShardError(error)
        }
    }
}
