import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Presignatures at a trio node (`docs/protocol/session.md` §8): the half is stored sealed before STORED,
/// and a FINAL_REQUEST consumes it in the same store transaction that produces FINAL_RESPONSE.
extension NodeStepRunner {
    /// The stored secret: `u8 version ‖ kf_{0→X} ‖ kf_{X→0} ‖ body`; version 1 (ECDSA): body =
    /// `DKLsPresignature.serialized()`; version 2 (EdDSA): body = `u16 len ‖ path bytes ‖ the app's
    /// round-1 commitments (64) ‖ FROST.Presignature.serialized()`.
    static let dklsPresignatureVersion: UInt8 = 1
    static let frostPresignatureVersion: UInt8 = 2

    /// session.md §5.4 "preSign result": store the half (one transaction, session.md §8.2), then STORED; a store failure is
    /// ABORT(STORAGE_FAILURE).
    func storePresignature(_ presignature: SessionPresignature, setup: ValidatedSetup, channel: inout PartyFrameChannel,
                           send: SessionDriver.Send) async throws(SilentShardError) -> NodeStepReport {
        let version: UInt8, body: [UInt8]
        switch presignature {
        case .ecdsa(let presignature):
            guard let bytes = try? presignature.serialized() else { throw .invalidInput(reason: "presignature") }
            (version, body) = (Self.dklsPresignatureVersion, bytes)
        case .eddsa(let frost):
            guard let bytes = try? frost.presignature.serialized(), frost.peer == 0 else {
                throw .invalidInput(reason: "presignature")
            }
            let path = setup.payload.path ?? [0]
            (version, body) = (Self.frostPresignatureVersion,
                               [UInt8(path.count >> 8), UInt8(path.count & 0xFF)] + path + frost.peerRound1 + bytes)
        }
        func abort(_ code: WireCode) async -> NodeStepReport {
            if let frame = try? channel.control(.abort, payload: AbortPayload(code: code, blamed: nil).encoded) {
                try? await send([frame])
            }
            return .failed(.serviceUnavailable(retryAfter: nil))
        }
        guard let keys = try? channel.receiver.preSignFinalKeys(with: 0),
              let keyID = setup.payload.keyID, let gen = setup.payload.gen
        else { return await abort(.internalError) }
        let stored = keys.storedKeys
        let secret = [version] + stored.request + stored.response + body
        let ttl = min(setup.payload.presignTTL ?? SessionConstants.defaultPresignatureTTLSeconds,
                      SessionConstants.maximumPresignatureTTLSeconds)
        let expiresAtSeconds = clock() / 1000 + UInt64(ttl)
        let row = NodePresignature(id: setup.instanceID.bytes, keyId: keyID.hex, gen: gen.bytes, party: party.index,
                                   deviceKey: setup.deviceKey.identity,
                                   expiresAt: Date(timeIntervalSince1970: TimeInterval(expiresAtSeconds)), secret: secret)
        do throws(NodeStoreError) {
            try await onStoreQueue { [store] () throws(NodeStoreError) in try store.storePresignature(row) }
        } catch {
            switch error {
            case .presignatureLimit: return await abort(.presignLimit)
            case .banned: return await abort(.banned)
            case .staleGeneration: return await abort(.staleGeneration)
            default: return await abort(.storageFailure)
            }
        }
        let payload = StoredPayload(presigID: setup.instanceID, keyID: keyID, gen: gen, expiresAt: expiresAtSeconds * 1000)
        guard let frame = try? channel.control(.stored, payload: payload.encoded) else { return await abort(.internalError) }
        do { try await send([frame]) } catch { return .failed(error) }
        return .presignatureStored(keyId: keyID.hex)
    }

    /// The answer to a preSignFinal POST body (session.md §8.3–8.4; a PRESIG_QUERY, session.md §8.6: PRESIG_STATUS): FINAL_RESPONSE or a REJECT frame; nil when
    /// the body is not a frame (HTTP 400). Node A forwards a request for B over a purpose-2 link with
    /// the app's `token` and returns B's answer unchanged. `principal`: what the server's verifier made
    /// of the token; a request for this node is authorized with it (`KeyAuthorization`: scope
    /// `preSignFinal`, device binding = the presignature's device, key owner = subject).
    ///
    /// Security review 2, finding 4: a principal or `clientAddress` past the session.md §9.5 limit of refused
    /// requests is RATE_LIMITED before anything is read, written or relayed; every refusal this node or B gives
    /// counts against both; A authorizes the scope before it opens a link to B.
    package func preSignFinal(body: [UInt8], token: [UInt8]?, principal: Principal?,
                             algorithm: SessionAlgorithm = .ecdsa, clientAddress: String? = nil) async -> [UInt8]? {
        guard let frame = try? Frame.parseSingle(body) else { return nil }
        let header = frame.header
        return await countingRefusals(instanceID: header.instanceID, principal: principal, address: clientAddress) {
            guard header.kind == .finalRequest || header.kind == .presigQuery, header.sender == 0 else {
                return rejectFrame(SetupRejection(.malformed), instanceID: header.instanceID, setupHash: nil).encoded()
            }
            if header.receiver == party.index { return await preSignFinalLocally(body, principal: principal) }
            guard let identity = party.trioIdentity, identity.isEntry, header.receiver == identity.peerIndex else {
                return rejectFrame(SetupRejection(.unexpected), instanceID: header.instanceID, setupHash: nil).encoded()
            }
            // A cannot see B's presignature, but what the credential alone decides it checks before the link.
            if let principal, !principal.allows(KeyAuthorization.scopeName(.preSignFinal)) {
                return rejectFrame(SetupRejection(.forbidden), instanceID: header.instanceID, setupHash: nil).encoded()
            }
            return await relayPreSignFinal(body, presigID: header.instanceID, identity: identity, token: token,
                                           algorithm: algorithm)
        }
    }

    /// Runs `answer` unless `principal` or `address` is limited for refused requests (session.md §9.5), and
    /// counts a REJECT it returns against them (``NodeRateLimiter/countsAgainstClient(_:)``).
    func countingRefusals(instanceID: InstanceID, principal: Principal?, address: String?,
                          _ answer: () async -> [UInt8]) async -> [UInt8] {
        guard let rateLimiter else { return await answer() }
        switch await rateLimiter.checkRequestFailures(principal: principal, address: address) {
        case .allowed?: break
        case .limited(let retryAfter)?:
            return rejectFrame(SetupRejection(.rateLimited, retryAfterSeconds: retryAfter), instanceID: instanceID,
                               setupHash: nil).encoded()
        case nil:
            return rejectFrame(SetupRejection(.storageFailure), instanceID: instanceID, setupHash: nil).encoded()
        }
        let bytes = await answer()
        if let frame = try? Frame.parseSingle(bytes), frame.header.kind == .reject,
           let code = (try? RejectPayload(bytes: frame.body))?.code, NodeRateLimiter.countsAgainstClient(code) {
            await rateLimiter.recordRequestFailure(principal: principal, address: address)
        }
        return bytes
    }

    /// A → B: LINK_OPEN (purpose 2), the FINAL_REQUEST, B's one answer back unchanged.
    private func relayPreSignFinal(_ body: [UInt8], presigID: InstanceID, identity: TrioNodeIdentity, token: [UInt8]?,
                                   algorithm: SessionAlgorithm) async -> [UInt8] {
        let unavailable = rejectFrame(SetupRejection(.peerUnavailable), instanceID: presigID, setupHash: nil).encoded()
        guard let peer, let link = try? await peer.openLink() else { return unavailable }
        let inbox = NodeInbox(deadlines: deadlines)
        inbox.attach(link, as: .peer)
        defer { inbox.stop() }
        let open = TrioLink.preSignFinalOpenFrame(identity: identity, presigID: presigID, algorithm: algorithm,
                                                  token: token, now: clock())
        do {
            try await link.send(Data(open.encoded()))
            try await link.send(Data(body))
        } catch {
            await link.close(code: 1011, reason: "link")
            return unavailable
        }
        let answer: [UInt8]
        switch await inbox.next(timeout: frameTimeout) {
        case .message(let bytes, _): answer = bytes
        default: answer = unavailable
        }
        await link.close(code: 1000, reason: "done")
        return answer
    }

    /// X's own FINAL_REQUEST (session.md §8.3): in one store transaction, authenticate it with `kf_{0→X}`,
    /// check the app's finish (its m equals the outer m), compute X's finish, assemble and verify the
    /// signature, delete the row and keep a finish record; a replay of the same bytes gets the same
    /// response, another request PRESIG_CONSUMED.
    ///
    /// Security review 2, findings 4 and 9: the presignature is first read without a write transaction
    /// (`presignatureLookup`) and, with a `principal`, authorized before anything about its state is
    /// answered: a presignature the principal may not finish (another subject's key, another device's
    /// binding) answers PRESIG_NOT_FOUND exactly like an id the node never had, and neither writes anything.
    /// Consumed (PRESIG_CONSUMED, or the stored response for the same request) and expired (PRESIG_EXPIRED)
    /// are answered from the read too; only a held, authorized presignature opens the consuming transaction,
    /// which authorizes again inside it (FORBIDDEN rolls back, so the presignature stays for its owner).
    func preSignFinalLocally(_ body: [UInt8], principal: Principal?) async -> [UInt8] {
        if let frame = try? Frame.parseSingle(body), frame.header.kind == .presigQuery, frame.header.sender == 0,
           frame.header.receiver == party.index {
            return await presignatureStatus(frame, principal: principal)
        }
        guard let frame = try? Frame.parseSingle(body), frame.header.kind == .finalRequest, frame.header.sender == 0,
              frame.header.receiver == party.index
        else {
            let id = (try? FrameHeader.decode(body.prefix(FrameHeader.byteCount)))?.instanceID ?? .unbound
            return rejectFrame(SetupRejection(.malformed), instanceID: id, setupHash: nil).encoded()
        }
        let presigID = frame.header.instanceID, local = party.index, groupID = party.groupID
        let requestHash = SHA256.hash(body)
        func refused(_ code: WireCode) -> [UInt8] { rejectFrame(SetupRejection(code), instanceID: presigID, setupHash: nil).encoded() }
        // What the credential alone decides, whatever the id (session.md §9.1).
        if let principal, !principal.allows(KeyAuthorization.scopeName(.preSignFinal)) { return refused(.forbidden) }
        do {
            return try await onStoreQueueAny { [store, keyshares] () throws -> [UInt8] in
                let lookup = try store.presignatureLookup(id: presigID.bytes)
                let keyID: String, device: [UInt8]?
                switch lookup {
                case .none: throw NodeStoreError.presignatureNotFound
                case .held(let id, let deviceKey, _): (keyID, device) = (id, deviceKey)
                case .finished(let id, _, _): (keyID, device) = (id, nil)
                }
                // Authorization before any state-specific answer: "not yours" is "not here".
                let owner = try store.ownership(keyId: keyID)
                if let principal {
                    if let binding = principal.deviceBinding, let device, binding != device {
                        throw NodeStoreError.presignatureNotFound
                    }
                    guard (try? KeyAuthorization.checkOwner(owner, principal: principal)) != nil else {
                        throw NodeStoreError.presignatureNotFound
                    }
                }
                switch lookup {
                case .none: throw NodeStoreError.presignatureNotFound
                case .finished(_, let consumedBy, let response):
                    guard constantTimeEqual(consumedBy, requestHash) else { throw NodeStoreError.presignatureConsumed }
                    return response
                case .held(_, _, let expired):
                    if expired { throw NodeStoreError.presignatureExpired }
                }
                // EdDSA needs the node's share (s_X) for its signature share: loaded first, its key id and
                // generation checked against the row inside the consuming transaction.
                let share = try store.share(keyId: keyID)
                let frostShare: FROST.Keyshare? = try share.flatMap { share in
                    guard share.kind == .eddsa else { return nil }
                    return try keyshares.keyshare(algorithm: .eddsa, mode: .trio,
                                                  protocolBytes: try NodeShareBlob(bytes: share.bytes).protocolBytes,
                                                  groupId: groupID).frostKeyshare()
                }
                let finish = try store.consumePresignature(id: presigID.bytes, requestHash: requestHash) { secret, row in
                    if let principal {
                        try KeyAuthorization.checkCredential(principal, operation: .preSignFinal, deviceKey: row.deviceKey)
                        guard row.keyId == keyID else { throw SetupRejection(.forbidden) }
                        try KeyAuthorization.checkOwner(owner, principal: principal)
                    }
                    return try Self.finish(secret: secret, row: row, frame: frame, local: local, frostShare: frostShare)
                }
                switch finish {
                case .finished(let response), .replayed(let response): return response
                }
            }
        } catch {
            return refused(Self.wireCode(error))
        }
    }

    static func finish(secret: [UInt8], row: NodePresignature, frame: Frame, local: PartyIndex,
                       frostShare: FROST.Keyshare?) throws -> [UInt8] {
        guard row.party == local, secret.count > 65 else { throw SetupRejection(.internalError) }
        let keys = try PreSignFinalKeys(signer: local, requestKey: Array(secret[1..<33]), responseKey: Array(secret[33..<65]))
        let (message, appFinish) = try keys.openRequest(frame)
        switch secret[0] {
        case dklsPresignatureVersion: break
        case frostPresignatureVersion:
            return try frostFinish(Array(secret[65...]), row: row, frame: frame, keys: keys, local: local, message: message,
                                   appShare: appFinish, keyshare: frostShare)
        default: throw SetupRejection(.internalError)
        }
        // ECDSA: the app's 128-byte finish fsid ‖ m ‖ w ‖ u, whose m must be the outer m (session.md §8.4).
        guard message.count == 32, appFinish.count == 128, Array(appFinish[32..<64]) == message else {
            throw SetupRejection(.malformed)
        }
        let presignature = try DKLsPresignature.deserialize(Array(secret[65...]))
        guard presignature.partyIndex == local, Hex.encode(presignature.keyId) == row.keyId,
              presignature.generation == row.gen
        else { throw SetupRejection(.internalError) }
        let (state, own) = try presignature.finish(messageHash: message)
        // The node assembles and verifies the signature (audit); a bad app finish consumes nothing.
        do {
            _ = try state.combine([ProtocolMessage(tag: DKLsTag.signFinish, from: 0, to: nil, payload: appFinish)])
        } catch {
            throw SetupRejection(.signatureFailed)
        }
        return try keys.response(presigID: frame.header.instanceID, finish: own.payload).encoded()
    }

    /// FROST final (version 2): round 2 of signing with the stored nonces and the app's commitments;
    /// the app's share (transcript ‖ z) is checked by assembling and verifying the signature.
    static func frostFinish(_ body: [UInt8], row: NodePresignature, frame: Frame, keys: PreSignFinalKeys, local: PartyIndex,
                            message: [UInt8], appShare: [UInt8], keyshare: FROST.Keyshare?) throws -> [UInt8] {
        guard let keyshare, Hex.encode(keyshare.keyId) == row.keyId, keyshare.generation == row.gen, keyshare.party == local,
              body.count > 2
        else { throw SetupRejection(.internalError) }
        let pathLength = Int(body[0]) << 8 | Int(body[1])
        guard body.count > 2 + pathLength + 64 else { throw SetupRejection(.internalError) }
        let path = try DerivationPathBytes(bytes: Array(body[2..<(2 + pathLength)]))
        let appRound1 = Array(body[(2 + pathLength)..<(2 + pathLength + 64)])
        let nonces = try FROST.Presignature.deserialize(Array(body[(2 + pathLength + 64)...]), keyshare: keyshare)
        guard message.count <= SessionConstants.maximumEdDSAMessageByteCount, appShare.count == 64 else {
            throw SetupRejection(.malformed)
        }
        var session = try FROST.SigningSession(keyshare: keyshare, signers: [0, local], message: message, path: path.indices,
                                               presignature: nonces)
        try session.receiveRound1(appRound1, from: 0)
        let own = try session.round2()
        do {
            try session.receiveRound2(appShare, from: 0)
            _ = try session.signature()
        } catch {
            throw SetupRejection(.signatureFailed)
        }
        return try keys.response(presigID: frame.header.instanceID, finish: own).encoded()
    }

    static func wireCode(_ error: any Error) -> WireCode {
        if let rejection = error as? SetupRejection { return rejection.code }
        if let error = error as? SessionError {
            if case .detected(let code, _) = error { return code }
            return .internalError
        }
        if error is ProtocolError { return .malformed }
        guard let error = error as? NodeStoreError else { return .internalError }
        switch error {
        case .presignatureNotFound: return .presigNotFound
        case .presignatureConsumed: return .presigConsumed
        case .presignatureExpired: return .presigExpired
        // session.md §8.2: rows of a generation that is no longer current are deleted at commit: gone for the app.
        case .staleGeneration: return .presigNotFound
        case .banned: return .banned
        default: return .storageFailure
        }
    }
}

/// Serves trio POSTs: the preSignFinal route (`/v3/{path}/presign-final`) with the node's
/// ``NodeStepRunner``; anything else goes to `fallback` (default 501).
package struct TrioPostHandler: PostHandler {
    package let runner: NodeStepRunner
    package let fallback: any PostHandler

    package init(runner: NodeStepRunner, fallback: any PostHandler = UnservedPostHandler()) {
        self.runner = runner
        self.fallback = fallback
    }

    package func handle(_ request: PostRequest) async throws -> PostResponse {
        guard request.route.mode == .trio, request.route.action == "presign-final" else {
            return try await fallback.handle(request)
        }
        guard request.body.count <= FrameHeader.byteCount + 24 + 64 * 1024,
              let response = await runner.preSignFinal(body: [UInt8](request.body), token: request.token.map { Array($0.utf8) },
                                                       principal: request.principal, algorithm: request.route.algorithm,
                                                       clientAddress: request.clientAddress)
        else { return PostResponse(status: 400, body: Data("unparsable preSignFinal request\n".utf8)) }
        return PostResponse(body: Data(response))
    }
}
