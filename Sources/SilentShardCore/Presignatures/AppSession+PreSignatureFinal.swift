import Foundation
import MPCCrypto
import MPCProtocols

/// preSignFinal (`docs/protocol/session.md` §8.4–8.5): one HTTP POST (FINAL_REQUEST → FINAL_RESPONSE,
/// end-to-end encrypted between the app and X), single use at the app through the presignature's durable
/// record — ready → finishing (the tombstone: message and request, written before anything is sent) →
/// finished (the signature; the secrets erased).
extension AppSession {
    /// Finishes `preSignature` on `message` over one POST to its node (`action`: the mode's preSignFinal
    /// route). See `TrioSession.preSignatureFinal(preSignature:message:)` for the contract.
    package func preSignatureFinal(_ preSignature: PreSignature, message: Data,
                                   action: any NetworkAction) async throws(SilentShardError) -> Signature {
        guard preSignature.mode == mode else { throw .invalidInput(reason: "presignature of another mode") }
        return try await finishPreSignature(preSignature: preSignature, message: message, action: action)
    }

    private func finishPreSignature(preSignature: PreSignature, message: Data,
                                    action: any NetworkAction) async throws(SilentShardError) -> Signature {
        let messageBytes = [UInt8](message)
        // One finish of this presignature at a time in this process; its record decides.
        return try await PresignatureShelf.locks.locked(PresignatureShelf.presignatureLock([UInt8](preSignature.id))) {
            () throws(SilentShardError) -> Signature in
            let shelf = presignatures
            guard let keyIdBytes = try? Hex.decode(preSignature.keyId),
                  var record = try await shelf.record(id: [UInt8](preSignature.id), keyId: keyIdBytes),
                  record.header == preSignature.recordHeader
            else {
                // Gone: expired (and its tombstone aged out), or of a generation that is no longer current
                // (dropped at the refresh, like X's half), or its record failed its integrity check.
                preSignature.markUsedUp()
                let now = Date(timeIntervalSince1970: TimeInterval(clock.milliseconds) / 1000)
                let margin = TimeInterval(SessionConstants.presignatureAppMarginSeconds)
                throw now.addingTimeInterval(margin) < preSignature.expiresAt
                    ? SilentShardError.presignatureNotFound : SilentShardError.presignatureExpired
            }
            let sent: PreSignature.Pending
            switch record.state {
            case .finished(let finishedMessage, let signatureBytes):
                preSignature.markUsedUp()
                guard finishedMessage == messageBytes else { throw SilentShardError.presignatureConsumed }
                guard let signature = Signature.fromRecord(signatureBytes, algorithm: algorithm,
                                                           key: [UInt8](preSignature.derivedPublicKey), message: messageBytes)
                else { throw SilentShardError.storage(reason: "a finished presignature record holds no valid signature") }
                return signature
            case .finishing(let recordedMessage, let request):
                preSignature.recordFinishing(recordedMessage)
                guard recordedMessage == messageBytes, let secrets = preSignature.secrets else {
                    throw SilentShardError.presignatureConsumed
                }
                sent = try finishing(preSignature, secrets: secrets, message: messageBytes, request: request)
            case .ready:
                guard !preSignature.isConsumed, let secrets = preSignature.secrets else { throw SilentShardError.presignatureConsumed }
                sent = try firstRequest(preSignature, secrets: secrets, message: messageBytes)
                // session.md §8.5: the tombstone, durably, before anything is sent.
                record.state = .finishing(message: messageBytes, request: sent.request)
                try await shelf.write(record)
                preSignature.recordFinishing(messageBytes)
            }
            // session.md §13.8 item 6: the steps' retry, resending these exact bytes.
            let signature = try await retryingPost { () throws(SilentShardError) in
                try await exchange(sent, preSignature: preSignature, action: action)
            }
            record.state = .finished(message: messageBytes, signature: signature.recordBytes)
            record.sealedSecrets = []
            do {
                try await shelf.write(record)
                preSignature.markUsedUp()
            } catch {
                // Not fatal: the record stays finishing and the secrets stay, so a retry with this message
                // resends the request and X answers from its finish record.
            }
            return signature
        }
    }

    /// The POST and the signature: X's FINAL_RESPONSE (or REJECT) combined with the app's finish.
    private func exchange(_ sent: PreSignature.Pending, preSignature: PreSignature,
                          action: any NetworkAction) async throws(SilentShardError) -> Signature {
        let responseBytes: [UInt8]
        let start = ContinuousClock.now
        do {
            responseBytes = [UInt8](try await client.sendPostRequest(
                action: action, params: preSignature.keyId, body: Data(sent.request)))
        } catch {
            let failure = AppStepEngine.networkError(error)
            recordPost(.preSignFinal, keyId: preSignature.keyId, sent: sent.request.count, received: 0,
                            duration: ContinuousClock.now - start, error: failure)
            throw failure
        }
        recordPost(.preSignFinal, keyId: preSignature.keyId, sent: sent.request.count, received: responseBytes.count,
                        duration: ContinuousClock.now - start, error: nil)
        let signer = preSignature.signerIndex
        let response: Frame
        do { response = try Frame.parseSingle(responseBytes) } catch { throw .malformedMessage(party: .node(signer)) }
        if response.header.kind == .reject {
            throw rejection(response, expectedInstanceID: InstanceID([UInt8](preSignature.id)) ?? .unbound, signer: signer)
        }
        let nodeFinish: [UInt8]
        do { nodeFinish = try sent.keys.openResponse(response) } catch {
            throw .messageAuthenticationFailed(party: .node(signer))
        }
        guard response.header.instanceID.bytes == [UInt8](preSignature.id) else { throw .protocolViolation(party: .node(signer)) }
        let signature: SessionSignature
        do { signature = try sent.finish.signature(signerFinish: nodeFinish) } catch { throw SilentShardError(error) }
        return try signature.signature()
    }

    /// session.md §8.5 for an unused presignature: check it and the message, compute the app's finish and a new
    /// FINAL_REQUEST.
    private func firstRequest(_ preSignature: PreSignature, secrets: PreSignature.Secrets,
                              message: [UInt8]) throws(SilentShardError) -> PreSignature.Pending {
        guard preSignature.algorithm == algorithm else { throw .invalidInput(reason: "presignature of another algorithm") }
        try AppSession.checkMessage(message, algorithm: algorithm)
        // session.md §8.2: the app refuses with a 60 s margin.
        let margin = TimeInterval(SessionConstants.presignatureAppMarginSeconds)
        let now = Date(timeIntervalSince1970: TimeInterval(clock.milliseconds) / 1000)
        guard now.addingTimeInterval(margin) < preSignature.expiresAt else { throw .presignatureExpired }
        guard let presigID = InstanceID([UInt8](preSignature.id)) else { throw .invalidInput(reason: "presignature id") }
        let finish = try appFinish(preSignature, secrets: secrets, message: message)
        let request: [UInt8]
        do { request = try secrets.finalKeys.request(presigID: presigID, message: message, finish: finish.finish).encoded() } catch {
            throw SilentShardError(error)
        }
        return PreSignature.Pending(message: message, request: request, finish: finish, keys: secrets.finalKeys)
    }

    /// session.md §8.5 for a presignature whose finish on `message` was recorded (here or before a restart): the same
    /// finish again (it is deterministic in the presignature and the message) with the recorded request.
    private func finishing(_ preSignature: PreSignature, secrets: PreSignature.Secrets, message: [UInt8],
                           request: [UInt8]) throws(SilentShardError) -> PreSignature.Pending {
        guard preSignature.algorithm == algorithm else { throw .invalidInput(reason: "presignature of another algorithm") }
        let finish = try appFinish(preSignature, secrets: secrets, message: message)
        return PreSignature.Pending(message: message, request: request, finish: finish, keys: secrets.finalKeys)
    }

    /// The app's finish on `message` (`PreSignFinalExchange.Requester`): ECDSA the DKLs23 round-3 message, EdDSA the
    /// FROST round-2 message with the nonces and X's commitments of preSign.
    private func appFinish(_ preSignature: PreSignature, secrets: PreSignature.Secrets, message: [UInt8])
        throws(SilentShardError) -> PreSignFinalExchange.Requester {
        do {
            if let share = secrets.frostKeyshare {
                let nonces = try FROST.Presignature.deserialize(secrets.presignature, keyshare: share)
                let path = try DerivationPath(preSignature.chainPath)
                return try PreSignFinalExchange.Requester(frost: share, nonces: nonces, signer: preSignature.signerIndex,
                                                        signerRound1: secrets.peerRound1, message: message,
                                                        path: path.indices)
            }
            let presignature = try DKLsPresignature.deserialize(secrets.presignature)
            guard Hex.encode(presignature.keyId) == preSignature.keyId,
                  presignature.generation == [UInt8](preSignature.generation)
            else { throw SilentShardError.invalidInput(reason: "presignature binding") }
            return try PreSignFinalExchange.Requester(dkls: presignature, messageHash: message, signer: preSignature.signerIndex)
        } catch let error as SilentShardError {
            throw error
        } catch let error as SessionError {
            throw SilentShardError(error)
        } catch let error as ProtocolError {
            throw SilentShardError(error)
        } catch {
            throw .invalidInput(reason: "presignature")
        }
    }

    /// A REJECT answering a FINAL_REQUEST or a PRESIG_QUERY: authenticated when its certificate verifies under the
    /// cluster key and its signature under the certified node key. It must name the request it answers
    /// (`expectedInstanceID`: the presignature id, or the query id): a node always echoes it, so a REJECT of
    /// another request (a replayed answer) is a protocol violation, never reported as this one's outcome
    /// (security review 2, finding 14).
    ///
    /// It must also come from the node the request was for (`signer`), except that node A may answer for B with a
    /// refusal of its own (B unreachable, a request it cannot relay, A's own admission); a presignature's state —
    /// PRESIG_NOT_FOUND / CONSUMED / EXPIRED — can only come from the node that holds it.
    package func rejection(_ frame: Frame, expectedInstanceID: InstanceID, signer: PartyIndex) -> SilentShardError {
        let sender = frame.header.sender
        guard (sender == 1 || (mode == .trio && sender == 2)), let payload = try? RejectPayload(bytes: frame.body) else {
            return .malformedMessage(party: nil)
        }
        guard frame.header.instanceID == expectedInstanceID else { return .protocolViolation(party: .node(sender)) }
        let answersForItself = sender == signer
        let relayRefusal = mode == .trio && signer == 2 && sender == 1
            && ![WireCode.presigNotFound, .presigConsumed, .presigExpired].contains(payload.code)
        guard answersForItself || relayRefusal else { return .protocolViolation(party: .node(sender)) }
        let authenticated = nodeKeyIsTrusted(payload.nodeKey, certificate: payload.certificate, sender: sender)
            && frame.hasValidSignature(by: payload.nodeKey)
        if payload.retryAfterSeconds > 0 {
            return SilentShardError(SessionError.retryLater(payload.code, afterSeconds: payload.retryAfterSeconds, by: sender,
                                                            authenticated: authenticated))
        }
        return SilentShardError(SessionError.reported(payload.code, by: sender, blamed: nil, authenticated: authenticated))
    }

    /// Whether `nodeKey` is node `sender`'s key as this session trusts it outside a step (session.md §1, §4.4;
    /// the rule a step's REJECT is judged by, `FrameReceiver.NodeTrust.trusts`).
    package func nodeKeyIsTrusted(_ nodeKey: Ed25519.VerifyingKey, certificate: NodeCertificate?, sender: PartyIndex) -> Bool {
        guard let cloudKey = try? CloudVerifyingKey.parse(engine.cloudVerifyingKey) else { return false }
        return FrameReceiver.NodeTrust(cloudKey: cloudKey, nowSeconds: clock.milliseconds / 1000)
            .trusts(nodeKey, certificate: certificate, sender: sender, mode: mode)
    }
}
