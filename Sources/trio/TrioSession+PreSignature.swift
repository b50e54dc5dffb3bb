import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Presignatures (`docs/protocol/session.md` §8; ECDSA, `dkls23.md` §13.4): preSign over the WebSocket with
/// one node X (stored there, STORED), the finish later over one HTTP POST (FINAL_REQUEST →
/// FINAL_RESPONSE, end-to-end encrypted between the app and X with the preSignFinal keys).
extension TrioSession {
    /// Presigns with node A (default) or B along the soft `chainPath`: rounds 1–2 of DKLs23 signing
    /// now, so that `preSignatureFinal` needs one POST. X stores its half (bound to key id,
    /// generation, signer set, path) before it answers STORED. ECDSA only.
    /// - Parameter ttl: requested lifetime in seconds (the node caps it; default 24 h).
    public func preSignature(keyshare: Keyshare, chainPath: String = "m", signer: TrioSigner = .nodeA,
                             ttl: UInt32? = nil) async throws(SilentShardError) -> PreSignature {
        try await core.observed("preSign", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await makePreSignature(keyshare: keyshare, chainPath: chainPath, signer: signer, ttl: ttl)
        }
    }

    private func makePreSignature(keyshare: Keyshare, chainPath: String, signer: TrioSigner,
                             ttl: UInt32?) async throws(SilentShardError) -> PreSignature {
        try check(keyshare)
        let path = try AppSession.softPath(chainPath)
        try await core.settleIfStaged(keyshare)
        let signers: [PartyIndex] = [0, signer.index]
        let presign = try await core.step(.preSign, action: actions.preSign, existing: keyshare,
                                     participants: signers) { setup in
            setup.keyID = keyshare.keyID
            setup.gen = keyshare.gen
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.presignTTL = ttl
        } body: { channel, link throws(SilentShardError) in
            let presignature = try await core.runProtocol(channel: &channel, link: link) { instanceID, setupHash, _, rng throws(ProtocolError) in
                switch keyshare.algorithm {
                case .ecdsa:
                    guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                    return try SessionProtocolMachine.dklsPresign(keyshare: share, signers: signers, instanceID: instanceID,
                                                                  setupHash: setupHash, path: path)
                case .eddsa:
                    guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                    return try SessionProtocolMachine.frostPresign(keyshare: share, signers: signers, using: &rng)
                }
            }
            // X stores its half before it answers STORED (§7.5).
            return try await core.aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
                let (stored, keys) = try await awaitStored(keyID: keyshare.keyID, gen: keyshare.gen,
                                                           signer: signer.index, channel: &channel, read: link.read)
                return PresignStep(presignature: presignature, stored: stored, keys: keys)
            }
        }
        let (stored, keys) = (presign.stored, presign.keys)
        switch presign.presignature {
        case .eddsa(let frost):
            guard let share = try? keyshare.frostKeyshare(), let bytes = try? frost.presignature.serialized(),
                  let derivation = try? FROST.Derivation(publicKey: share.publicKey, chainCode: share.chainCode,
                                                         path: path.indices)
            else { throw .invalidInput(reason: "preSign ended without a presignature") }
            return PreSignature(id: stored.presigID.bytes, keyId: keyshare.keyId, generation: stored.gen.bytes, signer: signer,
                                chainPath: chainPath, derivedPublicKey: derivation.publicKey.bytes,
                                expiresAt: Date(timeIntervalSince1970: TimeInterval(stored.expiresAt) / 1000),
                                algorithm: .eddsa,
                                secrets: .init(presignature: bytes, finalKeys: keys, frostKeyshare: share,
                                               peerRound1: frost.peerRound1))
        case .ecdsa(let presignature):
            guard let bytes = try? presignature.serialized(), let derived = try? presignature.derivedKey.compressed()
            else { throw .invalidInput(reason: "preSign ended without a presignature") }
            return PreSignature(id: stored.presigID.bytes, keyId: keyshare.keyId, generation: stored.gen.bytes, signer: signer,
                                chainPath: chainPath, derivedPublicKey: derived,
                                expiresAt: Date(timeIntervalSince1970: TimeInterval(stored.expiresAt) / 1000),
                                algorithm: .ecdsa, secrets: .init(presignature: bytes, finalKeys: keys))
        }
    }

    /// Finishes `preSignature` on `message` (ECDSA: the 32-byte hash) with one HTTP POST to its node
    /// (`NetworkClient.sendPostRequest`; through A when the signer is B) and returns the signature,
    /// verified under the derived key. Consumes the presignature on the first call, even if it fails.
    public func preSignatureFinal(preSignature: PreSignature, message: Data) async throws(SilentShardError) -> Signature {
        try await core.observed("preSignFinal", keyId: preSignature.keyId) { () throws(SilentShardError) in
            try await finishPreSignature(preSignature: preSignature, message: message)
        }
    }

    private func finishPreSignature(preSignature: PreSignature, message: Data) async throws(SilentShardError) -> Signature {
        let messageBytes = [UInt8](message)
        let sent: PreSignature.Pending
        switch preSignature.use(for: messageBytes) {
        case .consumed: throw .presignatureConsumed
        case .resend(let pending): sent = pending
        case .fresh(let secrets): sent = try await firstRequest(preSignature, secrets: secrets, message: messageBytes)
        }
        let responseBytes: [UInt8]
        let start = ContinuousClock.now
        do {
            responseBytes = [UInt8](try await core.client.sendPostRequest(
                action: actions.preSignFinal, params: preSignature.keyId, body: Data(sent.request)))
        } catch {
            let failure = Self.networkError(error)
            core.recordPost(.preSignFinal, keyId: preSignature.keyId, sent: sent.request.count, received: 0,
                            duration: ContinuousClock.now - start, error: failure)
            throw failure
        }
        core.recordPost(.preSignFinal, keyId: preSignature.keyId, sent: sent.request.count, received: responseBytes.count,
                        duration: ContinuousClock.now - start, error: nil)
        let signer = preSignature.signer.index
        let response: Frame
        do { response = try Frame.parseSingle(responseBytes) } catch { throw .malformedMessage(party: .node(signer)) }
        if response.header.kind == .reject { throw rejection(response) }
        let nodeFinish: [UInt8]
        do { nodeFinish = try sent.keys.openResponse(response) } catch {
            throw .messageAuthenticationFailed(party: .node(signer))
        }
        guard response.header.instanceID.bytes == [UInt8](preSignature.id) else { throw .protocolViolation(party: .node(signer)) }
        do {
            if var session = sent.frostSession {
                try session.receiveRound2(nodeFinish, from: signer)
                return try Signature(eddsa: Data(try session.signature()))
            }
            guard let finishState = sent.finishState else { throw ProtocolError.invalidInput(.invalidParameters) }
            let signature = try finishState.combine([ProtocolMessage(tag: DKLsTag.signFinish, from: signer, to: nil,
                                                                     payload: nodeFinish)])
            return Signature(ecdsa: signature)
        } catch let error as SilentShardError {
            throw error
        } catch let error as ProtocolError {
            throw SilentShardError(error)
        } catch {
            throw .signatureFailed(party: nil)
        }
    }

    /// §8.5 for a fresh presignature: check it, compute the app's finish and the FINAL_REQUEST, write
    /// the tombstone durably (staged = the request bytes), remember the request for a same-message retry.
    private func firstRequest(_ preSignature: PreSignature, secrets: PreSignature.Secrets,
                              message: [UInt8]) async throws(SilentShardError) -> PreSignature.Pending {
        guard preSignature.algorithm == algorithm else { throw .invalidInput(reason: "presignature of another algorithm") }
        try AppSession.checkMessage(message, algorithm: algorithm)
        // §8.2: the app refuses with a 60 s margin.
        let margin = TimeInterval(SessionConstants.presignatureAppMarginSeconds)
        let now = Date(timeIntervalSince1970: TimeInterval(core.clock.milliseconds) / 1000)
        guard now.addingTimeInterval(margin) < preSignature.expiresAt else { throw .presignatureExpired }
        guard let presigID = InstanceID([UInt8](preSignature.id)) else { throw .invalidInput(reason: "presignature id") }
        let pending: PreSignature.Pending
        do {
            if let share = secrets.frostKeyshare {
                // FROST: the final is round 2 (transcript ‖ z) with the nonces and X's commitments of preSign.
                let nonces = try FROST.Presignature.deserialize(secrets.presignature, keyshare: share)
                let path = try DerivationPath(preSignature.chainPath)
                var session = try FROST.SigningSession(keyshare: share, signers: [0, preSignature.signer.index],
                                                       message: message, path: path.indices, presignature: nonces)
                try session.receiveRound1(secrets.peerRound1, from: preSignature.signer.index)
                let ownShare = try session.round2()
                let request = try secrets.finalKeys.request(presigID: presigID, message: message,
                                                            finish: ownShare)
                pending = PreSignature.Pending(message: message, request: request.encoded(), finishState: nil,
                                               frostSession: session, keys: secrets.finalKeys)
            } else {
            let presignature = try DKLsPresignature.deserialize(secrets.presignature)
            guard Hex.encode(presignature.keyId) == preSignature.keyId,
                  presignature.generation == [UInt8](preSignature.generation)
            else { throw SilentShardError.invalidInput(reason: "presignature binding") }
            let (state, ownFinish) = try presignature.finish(messageHash: message)
            let request = try secrets.finalKeys.request(presigID: presigID, message: message,
                                                        finish: ownFinish.payload)
            pending = PreSignature.Pending(message: message, request: request.encoded(), finishState: state,
                                           frostSession: nil, keys: secrets.finalKeys)
            }
        } catch let error as SilentShardError {
            throw error
        } catch let error as SessionError {
            throw SilentShardError(error)
        } catch let error as ProtocolError {
            throw SilentShardError(error)
        } catch {
            throw .invalidInput(reason: "presignature")
        }
        do {
            try await core.storageClient.stage(keyId: preSignature.tombstoneKeyId,
                                          StoredShare(kind: .sdkRecord, bytes: Array("SPT1".utf8) + message + pending.request))
        } catch {
            throw SilentShardError(storage: error)
        }
        preSignature.recordSent(pending)
        return pending
    }

    /// A REJECT answering a FINAL_REQUEST: authenticated when its certificate verifies under the
    /// cluster key and its signature under the certified node key.
    private func rejection(_ frame: Frame) -> SilentShardError {
        let sender = frame.header.sender
        guard (sender == 1 || sender == 2), let payload = try? RejectPayload(bytes: frame.body) else {
            return .malformedMessage(party: nil)
        }
        var authenticated = false
        if let certificate = payload.certificate, let cloudKey = try? CloudVerifyingKey.parse(core.engine.cloudVerifyingKey) {
            let now = core.clock.milliseconds / 1000
            authenticated = (try? certificate.verify(issuer: cloudKey, senderIndex: sender, mode: .trio, nowSeconds: now)) != nil
                && certificate.nodeKey == payload.nodeKey && frame.hasValidSignature(by: certificate.nodeKey)
        }
        if payload.retryAfterSeconds > 0 {
            return SilentShardError(SessionError.retryLater(payload.code, afterSeconds: payload.retryAfterSeconds, by: sender,
                                                            authenticated: authenticated))
        }
        return SilentShardError(SessionError.reported(payload.code, by: sender, blamed: nil, authenticated: authenticated))
    }

    /// After the presignature: X's STORED (presig_id = this session's instance id, the key id and
    /// generation of the SETUP), and the preSignFinal keys shared with X.
    func awaitStored(keyID: KeyID, gen: Generation, signer: PartyIndex, channel: inout PartyFrameChannel,
                     read: SessionDriver.Read) async throws(SilentShardError) -> (StoredPayload, PreSignFinalKeys) {
        let frame = try await SessionDriver.awaitControl(.stored, from: signer, channel: &channel, read: read)
        guard let stored = try? StoredPayload(bytes: frame.payload), stored.presigID == channel.instanceID,
              stored.keyID == keyID, stored.gen == gen
        else { throw .protocolViolation(party: .node(signer)) }
        let keys: PreSignFinalKeys?
        do { keys = try channel.receiver.preSignFinalKeys(with: signer) } catch { throw SilentShardError(error) }
        guard let keys else { throw .protocolViolation(party: .node(signer)) }
        return (stored, keys)
    }
}
