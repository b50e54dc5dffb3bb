import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Node B: serves the sessions node A relays (`docs/protocol/session.md` §2.3, §6.1 rule 3).
extension NodeStepRunner {
    /// Serves one inter-node link opened by A for an app session: LINK_OPEN, then the app's SETUP
    /// (validated entirely here, session.md §4.3), then B's side of the session. Closes the link at the end.
    /// - Parameter linkOpened: told whether LINK_OPEN was accepted, before anything else is read (the
    ///   server then authenticates the connection, or counts a failed authentication of its address).
    package func serveLink(connection: some NodeStepConnection,
                          linkOpened: @Sendable (_ accepted: Bool) -> Void = { _ in }) async -> NodeStepReport {
        guard let identity = party.trioIdentity, !identity.isEntry else {
            await connection.close(code: 1011, reason: "not node B")
            return .failed(.unsupportedOperation)
        }
        let inbox = NodeInbox(deadlines: deadlines)
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
        if opened.payload.purpose == .preSignFinal {
            // A preSignFinal link has no SETUP whose instance_id the replay store would keep: its LINK_OPEN is kept
            // instead (the frame's hash; its nonce makes each of A's retries unique), so a captured one cannot be
            // opened again (security review 2, finding 14). A replay is not from A: counted as a failed authentication.
            let (replayID, now, retention) = (opened.replayID, clock(), replayRetentionMilliseconds)
            do {
                try await onStoreQueue { [store] () throws(NodeStoreError) in
                    try store.recordSessionInstance(replayID, nowMilliseconds: now, retentionMilliseconds: retention)
                }
            } catch {
                if case .replay = error { linkOpened(false) }
                await connection.close(code: 1008, reason: "link refused")
                return .failed(error == .replay ? .replayDetected : .storage(reason: "replay store"))
            }
        }
        linkOpened(true)
        guard case .message(let message, _) = await inbox.next(timeout: setupTimeout) else {
            await connection.close(code: 1002, reason: "no setup")
            return .failed(.timeout)
        }
        if opened.payload.purpose == .preSignFinal {
            // session.md §2.3, §8.4: one FINAL_REQUEST relayed by A; B checks the app token itself.
            let response: [UInt8]
            let requestID = (try? FrameHeader.decode(message.prefix(FrameHeader.byteCount)))?.instanceID
            if requestID != opened.instanceID {
                // The link names the presignature it is for (LINK_OPEN instance_id = presig_id).
                response = rejectFrame(SetupRejection(.unexpected), instanceID: opened.instanceID, setupHash: nil).encoded()
            } else if case (.accepted, let principal) = await tokenCheck(opened.payload.token) {
                // Counted and limited at B too (session.md §9.5; no address: A counts the client's).
                response = await preSignFinalRelayed(message, principal: principal)
            } else {
                response = rejectFrame(SetupRejection(opened.payload.token == nil ? .authRequired : .authInvalid), instanceID: opened.instanceID, setupHash: nil).encoded()
            }
            try? await connection.send(Data(response))
            await connection.close(code: 1000, reason: "done")
            return .signed(confirmed: false)
        }
        // session.md §4.3 steps 1–8, with the route from LINK_OPEN and the token A forwarded; then admission with the
        // principal of the forwarded token, independently of A.
        let now = clock()
        let setupKeyID = (try? Frame.parseBundle(message))?.first.flatMap { try? SetupPayload(bytes: $0.body) }?.keyID
        let params = opened.operation == .import ? nil : setupKeyID?.hex
        let (verdict, verified) = await tokenCheck(opened.payload.token)
        let principal = Self.counted(verified, forwardedAddress: opened.payload.clientAddress, limits: rateLimiter?.limits)
        let context = validationContext(algorithm: opened.algorithm, operation: opened.operation, params: params,
                                        token: verdict, now: now)
        let step: AdmittedStep
        do throws(StepEnded) {
            // The link belongs to this session only (`linkInstance`).
            step = try await admitSetup(message, context: context, principal: principal, address: nil,
                                        linkInstance: opened.instanceID, connection: connection)
        } catch {
            return error.report
        }
        let report = await serveOneConnection(step, now: now, connection: connection, inbox: inbox)
        await step.finish()
        return report
    }

    /// session.md §9.5 at B (second review finding 5): a shared subject (`token-file`, `--auth none`, a hook's
    /// fallback) is counted per the client address A forwarded in LINK_OPEN. The field is believed
    /// because `TrioLink.accept` took the frame only from a certified A of this group (certificate of
    /// the other role under the cluster key, signed by its node key, the signature covering the field);
    /// nothing else can set it. Without it (an A of an older release) the subject is counted as before.
    static func counted(_ principal: Principal?, forwardedAddress: [UInt8]?, limits: NodeRateLimits?) -> Principal? {
        guard let principal, let bytes = forwardedAddress, !bytes.isEmpty else { return principal }
        let text = String(decoding: bytes, as: UTF8.self)
        let prefix = limits?.ipv6PrefixLength ?? NodeRateLimits.defaultIPv6PrefixLength
        return principal.counted(at: ClientAddress.bucket(text, ipv6PrefixLength: prefix) ?? text)
    }
}
