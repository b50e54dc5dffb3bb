import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Node B: serves the sessions node A relays (`specs/session.md` §2.3, §6.1 rule 3).
extension TrioStepRunner {
    /// Serves one inter-node link opened by A for an app session: LINK_OPEN, then the app's SETUP
    /// (validated entirely here, §4.3), then B's side of the session. Closes the link at the end.
    /// - Parameter linkOpened: told whether LINK_OPEN was accepted, before anything else is read (the
    ///   server then authenticates the connection, or counts a failed authentication of its address).
    package func serveLink(connection: some NodeStepConnection,
                          linkOpened: @Sendable (_ accepted: Bool) -> Void = { _ in }) async -> TrioStepReport {
        guard !identity.isEntry else {
            await connection.close(code: 1011, reason: "not node B")
            return .failed(.unsupportedOperation)
        }
        let inbox = TrioInbox()
        inbox.attach(connection, as: .peer)
        defer { inbox.stop() }
        guard case .message(let first, _) = await inbox.next(timeout: setupTimeout) else {
            await connection.close(code: 1002, reason: "no link open")
            return .failed(.timeout)
        }
        let opened: TrioLink.Opened
        do {
            let window = replay.withLock { $0 }
            opened = try TrioLink.accept(first, identity: identity, replay: window, now: clock())
        } catch {
            // An unauthenticated opener gets nothing but the close (A reports PEER_UNAVAILABLE). Anything
            // but a certified A counts as a failed authentication; a stale timestamp from a certified A
            // is its clock, not an attack, and is not counted against A's address.
            if case .clockSkew = error {} else { linkOpened(false) }
            await connection.close(code: 1008, reason: "link refused")
            return .failed(error)
        }
        linkOpened(true)
        guard case .message(let message, _) = await inbox.next(timeout: setupTimeout) else {
            await connection.close(code: 1002, reason: "no setup")
            return .failed(.timeout)
        }
        if opened.payload.purpose == .preSignFinal {
            // §2.3, §8.4: one FINAL_REQUEST relayed by A; B checks the app token itself.
            let response: [UInt8]
            let requestID = (try? FrameHeader.decode(message.prefix(FrameHeader.byteCount)))?.instanceID
            if requestID != opened.instanceID {
                // The link names the presignature it is for (LINK_OPEN instance_id = presig_id).
                response = rejectFrame(SetupRejection(.unexpected), instanceID: opened.instanceID, setupHash: nil).encoded()
            } else if case (.accepted, let principal) = await tokenCheck(opened.payload.token) {
                response = await preSignFinalLocally(message, principal: principal)
            } else {
                response = rejectFrame(SetupRejection(opened.payload.token == nil ? .authRequired : .authInvalid), instanceID: opened.instanceID, setupHash: nil).encoded()
            }
            try? await connection.send(Data(response))
            await connection.close(code: 1000, reason: "done")
            return .signed(confirmed: false)
        }
        // §4.3 steps 1–8, with the route from LINK_OPEN and the token A forwarded.
        let now = clock()
        let setupKeyID = (try? Frame.parseBundle(message))?.first.flatMap { try? SetupPayload(bytes: $0.body) }?.keyID
        let params = opened.operation == .import ? nil : setupKeyID.map { Hex.encode($0) }
        let (verdict, principal) = await tokenCheck(opened.payload.token)
        let context = SetupValidationContext(token: verdict, mode: .trio, algorithm: opened.algorithm,
                                             operation: opened.operation, params: params, nodeIndex: 2,
                                             servedOperations: Self.servedOperations, cloudKey: identity.clusterKey.bytes,
                                             groupID: identity.groupID, now: now)
        let validated: (setup: ValidatedSetup, rest: [Frame])
        do {
            validated = try replay.withLock { (window: inout ReplayWindow) throws(SetupRejection) in
                try SetupValidator.validate(message: message, context: context, replay: &window)
            }
        } catch {
            rateLimiter?.noteRejected(error, setupMessage: message, principal: principal?.rateLimitKey ?? "")
            return await rejectOnLink(error, instanceID: RejectedSetup.instanceID(of: message),
                                      setupHash: RejectedSetup.setupHash(of: message), connection: connection)
        }
        let setup = validated.setup
        func reject(_ code: WireCode, detail: [UInt8] = []) async -> TrioStepReport {
            await rejectOnLink(SetupRejection(code, detail: detail), instanceID: setup.instanceID, setupHash: setup.setupHash,
                               connection: connection)
        }
        // The link belongs to this session only.
        guard opened.instanceID == setup.instanceID else { return await reject(.unexpected) }
        // Admission (`admitStep`) with the principal of the forwarded token, independently of A.
        let admitted: AdmittedStep
        do { admitted = try await admitStep(setup, principal: principal, now: now) } catch {
            return await rejectOnLink(error, instanceID: setup.instanceID, setupHash: setup.setupHash, connection: connection)
        }
        defer { admitted.admission.end() }
        let (authorization, current, status) = (admitted.admission.authorization, admitted.current, admitted.status)
        let keys = SessionKeyPair()
        var run: NodeProtocolRun?
        if setup.operation != .reconcile {
            do { run = try makeRun(setup, current: current) } catch { return await reject(.invalidParameter) }
        }
        var channel: PartyFrameChannel
        do {
            channel = try PartyFrameChannel(local: 2, setupFrame: setup.frame, setup: setup.payload, keys: keys,
                                            trust: trust(now: now), protocolTags: run?.receivableTags ?? [])
        } catch {
            return await reject(.invalidParameter)
        }
        let send: SessionDriver.Send = { (frames: [Frame]) throws(SilentShardError) in
            do { try await connection.send(Data(Frame.bundle(frames))) } catch { throw .network(.connectionLost) }
        }
        let read: SessionDriver.Read = { [frameTimeout] () throws(SilentShardError) in
            switch await inbox.next(timeout: frameTimeout) {
            case .message(let bytes, _): return SessionDriver.Incoming(bytes: bytes, link: [0, 1])
            case .closed: throw .network(.connectionLost)
            case .timeout: throw .timeout
            }
        }
        let accept = channel.acceptFrame(payload: acceptPayload(setup, keys: keys, now: now, status: status),
                                         nodeKey: identity.nodeKey)
        let report: TrioStepReport
        do throws(SilentShardError) {
            try await send([accept])
            let early = channel.ingest(frames: validated.rest, link: [0])
            if let failure = early.failure { throw failure }
            // Node A's ACCEPT before any P2P to it (§4.4).
            if setup.participants.contains(1) {
                _ = try await SessionDriver.awaitControl(.accept, from: 1, channel: &channel, read: read)
            }
            if let run {
                report = await participate(setup: setup, run: run, channel: &channel, leading: [], send: send,
                                           read: read, relay: { _ throws(SilentShardError) in }, owner: authorization.owner)
            } else {
                report = await reconcileRunning(setup, channel: &channel, send: send, read: read,
                                                relay: { _ throws(SilentShardError) in }, owner: authorization.owner)
            }
        } catch {
            if channel.peerAbort == nil, let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                try? await send([frame])
            }
            await connection.close(code: 1011, reason: "aborted")
            return .failed(error)
        }
        switch report {
        case .failed: await connection.close(code: 1011, reason: "aborted")
        default: await connection.close(code: 1000, reason: "done")
        }
        return report
    }

    private func rejectOnLink(_ rejection: SetupRejection, instanceID: [UInt8], setupHash: [UInt8]?,
                              connection: some NodeStepConnection) async -> TrioStepReport {
        let frame = rejectFrame(rejection, instanceID: instanceID, setupHash: setupHash)
        try? await connection.send(Data(frame.encoded()))
        await connection.close(code: 1008, reason: "rejected")
        return .rejected(rejection.code)
    }
}
