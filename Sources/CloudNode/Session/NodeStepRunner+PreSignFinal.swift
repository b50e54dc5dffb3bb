import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The preSignFinal route's two requests at a node (`docs/protocol/session.md` §8.3–8.4, §8.6): a FINAL_REQUEST
/// consumes a stored presignature in the store transaction that produces FINAL_RESPONSE; a PRESIG_QUERY answers
/// PRESIG_STATUS. Both pass the admission stages `AdmissionPlans` chooses for their kind first.
extension NodeStepRunner {
    /// The answer to a preSignFinal POST body: FINAL_RESPONSE, PRESIG_STATUS or a REJECT frame; nil when the body
    /// is not a frame (HTTP 400). Node A forwards a request for B over a purpose-2 link with the app's `token` and
    /// returns B's answer unchanged. `principal`: what the server's verifier made of the token (scope
    /// `preSignFinal`, device binding = the presignature's device, key owner = subject).
    ///
    /// Security review 2, finding 4: a principal or `clientAddress` past the session.md §9.5 limit of refused
    /// requests is RATE_LIMITED before anything is read, written or relayed; every refusal this node or B gives
    /// counts against both; A authorizes the scope before it opens a link to B.
    package func preSignFinal(body: [UInt8], token: [UInt8]?, principal: Principal?,
                             algorithm: SessionAlgorithm = .ecdsa, clientAddress: String? = nil) async -> [UInt8]? {
        guard (try? Frame.parseSingle(body)) != nil else { return nil }
        let kind = PresignatureRequest.kind(of: body, party: party, atLink: false)
        return await answer(PresignatureRequest(body: body, kind: kind, principal: principal, address: clientAddress),
                            token: token, algorithm: algorithm)
    }

    /// Node B: a FINAL_REQUEST or PRESIG_QUERY A relayed over a purpose-2 link, with the principal of the token A
    /// forwarded (no address: A counts the client's).
    func preSignFinalRelayed(_ body: [UInt8], principal: Principal?) async -> [UInt8] {
        let kind = PresignatureRequest.kind(of: body, party: party, atLink: true)
        return await answer(PresignatureRequest(body: body, kind: kind, principal: principal, address: nil),
                            token: nil, algorithm: .ecdsa)
    }

    /// Admission for the request's kind, then its operation; every refusal — a stage's, the operation's, B's
    /// relayed REJECT — is seen by the stages (counted, session.md §9.5).
    private func answer(_ admitted: PresignatureRequest, token: [UInt8]?, algorithm: SessionAlgorithm) async -> [UInt8] {
        var request = admitted
        let plan = AdmissionPlans.presignatureRequest(request.kind, at: self)
        do {
            try await plan.admit(&request)
        } catch {
            return rejectFrame(error, instanceID: request.instanceID, setupHash: nil).encoded()
        }
        let outcome: Result<[UInt8], SetupRejection>
        switch request.kind {
        case .finalRequest: outcome = await finishPresignature(request)
        case .presigQuery: outcome = await presignatureStatus(request)
        case .relay:
            let bytes = await relayPreSignFinal(request, token: token, algorithm: algorithm)
            if let code = Self.rejectCode(of: bytes) { await plan.refused(request, SetupRejection(code)) }
            return bytes
        case .refused(let code): outcome = .failure(SetupRejection(code))  // the plan refused it already
        }
        switch outcome {
        case .success(let bytes): return bytes
        case .failure(let rejection):
            await plan.refused(request, rejection)
            return rejectFrame(rejection, instanceID: request.instanceID, setupHash: nil).encoded()
        }
    }

    /// X's own FINAL_REQUEST, admitted (scope, the presignature read and authorized, its state, device limits, bans,
    /// the authenticator): in one store transaction, authenticate it with `kf_{0→X}`, check the app's finish,
    /// compute X's, delete the row and keep a finish record (session.md §8.3). The transaction authorizes again
    /// inside it (FORBIDDEN rolls back, so the presignature stays for its owner).
    private func finishPresignature(_ request: PresignatureRequest) async -> Result<[UInt8], SetupRejection> {
        if let stored = request.storedResponse { return .success(stored) }
        guard let frame = request.frame, case .held(let keyID, _, _)? = request.lookup else {
            return .failure(SetupRejection(.internalError))
        }
        let (presigID, local, groupID, principal) = (request.instanceID, party.index, party.groupID, request.principal)
        let requestHash = SHA256.hash(request.body)
        do {
            return .success(try await onStoreQueueAny { [store, keyshares] () throws -> [UInt8] in
                let owner = try store.ownership(keyId: keyID)
                // EdDSA needs the node's share (s_X) for its signature share: loaded first, its key id and
                // generation checked against the row inside the consuming transaction.
                let share = try store.share(keyId: keyID)
                let frostShare: FROST.Keyshare? = try share.flatMap { share in
                    guard share.kind == .eddsa else { return nil }
                    return try keyshares.keyshare(algorithm: .eddsa, mode: .trio,
                                                  protocolBytes: try NodeShareBlob(bytes: share.bytes).protocolBytes,
                                                  groupId: groupID).frostKeyshare()
                }
                let finish = try store.consumePresignature(id: presigID.bytes, requestHash: requestHash) { bytes, row in
                    if let principal {
                        try KeyAuthorization.checkCredential(principal, operation: .preSignFinal, deviceKey: row.deviceKey)
                        guard row.keyId == keyID else { throw SetupRejection(.forbidden) }
                        try KeyAuthorization.checkOwner(owner, principal: principal)
                    }
                    let secret = try Self.decodeSecret(bytes, row: row, local: local)
                    return try Self.finish(secret, row: row, frame: frame, local: local, frostShare: frostShare)
                }
                switch finish {
                case .finished(let response), .replayed(let response): return response
                }
            })
        } catch {
            return .failure(SetupRejection(Self.wireCode(error)))
        }
    }

    /// A → B: LINK_OPEN (purpose 2), the FINAL_REQUEST or PRESIG_QUERY, B's one answer back unchanged.
    private func relayPreSignFinal(_ request: PresignatureRequest, token: [UInt8]?, algorithm: SessionAlgorithm) async -> [UInt8] {
        let presigID = request.instanceID
        let unavailable = rejectFrame(SetupRejection(.peerUnavailable), instanceID: presigID, setupHash: nil).encoded()
        guard let identity = party.trioIdentity, let peer, let link = try? await peer.openLink() else { return unavailable }
        let inbox = NodeInbox(deadlines: deadlines)
        inbox.attach(link, as: .peer)
        defer { inbox.stop() }
        let open = TrioLink.preSignFinalOpenFrame(identity: identity, presigID: presigID, algorithm: algorithm,
                                                  token: token, now: clock())
        do {
            try await link.send(Data(open.encoded()))
            try await link.send(Data(request.body))
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

    /// The code of a REJECT frame (nil: the bytes are not one).
    static func rejectCode(of bytes: [UInt8]) -> WireCode? {
        guard let frame = try? Frame.parseSingle(bytes), frame.header.kind == .reject else { return nil }
        return (try? RejectPayload(bytes: frame.body))?.code
    }

    /// The REJECT code of a store, session or protocol error of a preSignFinal request.
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
