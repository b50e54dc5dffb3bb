import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The node half of every session step (`docs/protocol/session.md` §4.3, §5.4, §6, §7.2), for duo's node and
/// trio's nodes A and B alike; ``NodeParty`` says which. One step runs in one order at every node:
///
/// 1. **validate** the SETUP (session.md §4.3 steps 1–8, `SetupValidator`, with the in-memory replay window) and
/// 2. **admit** it (durable replay, authorization, rate limits, the key's lease, bans, key state: steps 9–10) —
///    the admission stages `AdmissionPlans` chooses for the operation, `NodeStepRunner+Admission.swift`;
/// 3. **run** the protocol over the one wire engine (`SessionDriver`) and its ending — commit by the
///    mode's policy (duo commits directly; trio prepares, READY, commits), DONE, a stored presignature,
///    or reconcile — `NodeStepRunner+Participation.swift`.
///
/// The modes differ only in where frames travel: duo's node and trio's B have one connection
/// (`serveOneConnection`); trio's A also links to B and relays between the app and B
/// (`NodeStepRunner+Relay.swift`); B accepts A's link (`NodeStepRunner+Link.swift`).
///
/// MPC rounds run on `SessionCompute`'s queue, store calls (synchronous SQLite or PostgreSQL) on this
/// runner's serial queue — neither blocks Swift's cooperative pool.
package final class NodeStepRunner: Sendable {
    /// Who this node is: duo's node, trio's A or trio's B.
    package let party: NodeParty
    let store: NodeShareStore
    /// Node A's way to open a link to B (nil elsewhere).
    let peer: (any TrioPeerConnector)?
    /// The SETUP replay window (session.md §9.6) in memory; the durable store is the `durable replay` admission stage.
    let replay: LockedValue<ReplayWindow>
    let replayRetentionMilliseconds: UInt64
    let storeQueue = NodeStoreQueues(label: "silentshard.node.store")
    /// How long a share-changing step or reconcile holds its key's lease at most (session.md §7.2).
    let leaseSeconds: Int64
    let clock: @Sendable () -> UInt64
    /// Devices this process banned (session.md §9.4), before and until the store has them (finding 12).
    package let bans = DeviceBanLedger()
    let setupTimeout: Duration
    let frameTimeout: Duration
    /// How the deadlines are waited out (the system clock; tests inject their own).
    let deadlines: NodeDeadlines
    /// Keyshares decoded and validated by earlier steps (a signing key is not re-validated per signature).
    let keyshares = NodeKeyshareCache()
    /// Node B's check of the app token A forwards: the verdict and, with a verifier, the principal.
    let tokenCheck: @Sendable ([UInt8]?) async -> (SetupValidationContext.TokenVerdict, Principal?)
    /// session.md §9.5 limits on principals, device keys and keys (the server's, shared), or nil.
    let rateLimiter: NodeRateLimiter?

    /// - Parameters:
    ///   - party: duo's node, or a trio node with its identity.
    ///   - store: the node's own share store (each node has its own database).
    ///   - peer: node A's way to open a link to B (nil elsewhere).
    ///   - replayWindow: the SETUP replay window (session.md §9.6).
    ///   - tokenVerdict: node B's own check of the app token A forwards in LINK_OPEN (session.md §6.1 rule 3); A's
    ///     and duo's servers check the token before `run` (the default accepts every token). No
    ///     principal, so B checks no scopes or owner with it; prefer `tokenVerifier`.
    ///   - tokenVerifier: when set, node B verifies the forwarded token with it (replacing
    ///     `tokenVerdict`) and authorizes with the principal it gives (session.md §9.1–9.3), like A does with its
    ///     server's principal.
    ///   - clock: node time in ms since the Unix epoch.
    ///   - setupTimeout, frameTimeout: session.md §5.4 deadlines for the SETUP and for each expected frame; on
    ///     expiry the step fails with `timeout` (nothing is stored).
    ///   - deadlines: how the deadlines are waited out (default: the system clock).
    ///   - leaseDuration: how long a share-changing step or reconcile holds its key's lease (session.md §7.2) at
    ///     most; the runner releases it when the step ends, the expiry only matters after a crash.
    ///   - rateLimiter: session.md §9.5 limits (give the server's `NodeServerConfiguration.rateLimiter`); nil: none.
    package init(party: NodeParty, store: NodeShareStore, peer: (any TrioPeerConnector)? = nil, replayWindow: ReplayWindow,
                 tokenVerdict: @escaping @Sendable ([UInt8]?) async -> SetupValidationContext.TokenVerdict = { _ in .accepted },
                 tokenVerifier: (any TokenVerifier)? = nil,
                 clock: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) },
                 setupTimeout: Duration = .milliseconds(Int64(SessionConstants.setupTimeoutMilliseconds)),
                 frameTimeout: Duration = .milliseconds(Int64(SessionConstants.frameTimeoutMilliseconds)),
                 deadlines: NodeDeadlines = .system,
                 leaseDuration: Duration = .seconds(300), rateLimiter: NodeRateLimiter? = nil) {
        self.party = party
        self.store = store
        self.peer = peer
        replay = LockedValue(replayWindow)
        replayRetentionMilliseconds = replayWindow.retentionMilliseconds
        tokenCheck = Self.tokenCheck(verdict: tokenVerdict, verifier: tokenVerifier)
        self.clock = clock
        self.setupTimeout = setupTimeout
        self.frameTimeout = frameTimeout
        self.deadlines = deadlines
        leaseSeconds = max(1, leaseDuration.components.seconds)
        self.rateLimiter = rateLimiter
    }

    /// Duo's node: `nodeKey`'s public key is the app's `cloudVerifyingKey`.
    package convenience init(nodeKey: Ed25519.SigningKey, store: NodeShareStore, replayWindow: ReplayWindow,
                             clock: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) },
                             setupTimeout: Duration = .milliseconds(Int64(SessionConstants.setupTimeoutMilliseconds)),
                             frameTimeout: Duration = .milliseconds(Int64(SessionConstants.frameTimeoutMilliseconds)),
                             leaseDuration: Duration = .seconds(300), rateLimiter: NodeRateLimiter? = nil) {
        self.init(party: .duo(nodeKey: nodeKey), store: store, replayWindow: replayWindow, clock: clock,
                  setupTimeout: setupTimeout, frameTimeout: frameTimeout, leaseDuration: leaseDuration,
                  rateLimiter: rateLimiter)
    }

    /// A trio node (A with `peer`, B without).
    package convenience init(identity: TrioNodeIdentity, store: NodeShareStore, peer: (any TrioPeerConnector)?,
                             replayWindow: ReplayWindow,
                             tokenVerdict: @escaping @Sendable ([UInt8]?) async -> SetupValidationContext.TokenVerdict = { _ in .accepted },
                             tokenVerifier: (any TokenVerifier)? = nil,
                             clock: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) },
                             setupTimeout: Duration = .milliseconds(Int64(SessionConstants.setupTimeoutMilliseconds)),
                             frameTimeout: Duration = .milliseconds(Int64(SessionConstants.frameTimeoutMilliseconds)),
                             deadlines: NodeDeadlines = .system,
                             leaseDuration: Duration = .seconds(300), rateLimiter: NodeRateLimiter? = nil) {
        self.init(party: .trio(identity), store: store, peer: peer, replayWindow: replayWindow, tokenVerdict: tokenVerdict,
                  tokenVerifier: tokenVerifier, clock: clock, setupTimeout: setupTimeout, frameTimeout: frameTimeout,
                  deadlines: deadlines, leaseDuration: leaseDuration, rateLimiter: rateLimiter)
    }

    private static func tokenCheck(
        verdict: @escaping @Sendable ([UInt8]?) async -> SetupValidationContext.TokenVerdict, verifier: (any TokenVerifier)?
    ) -> @Sendable ([UInt8]?) async -> (SetupValidationContext.TokenVerdict, Principal?) {
        guard let verifier else { return { token in (await verdict(token), nil) } }
        return { token in
            // The forwarded token is outside input: only a well-formed b64token reaches the verifier.
            if let token, !BearerToken.isWellFormed(bytes: token) { return (.invalid, nil) }
            do {
                return (.accepted, try await verifier.verify(token: token.map { String(decoding: $0, as: UTF8.self) }))
            } catch AuthenticationError.missingToken {
                return (.missing, nil)
            } catch {
                return (.invalid, nil)
            }
        }
    }

    // MARK: - The app's step (duo's node, trio's A)

    /// Runs one app step on `connection` for `route` and closes the connection.
    ///
    /// `token`: the app's token (the server verified it already); trio's A forwards it to B in LINK_OPEN.
    /// `principal`: what the server's verifier made of it (nil when no verifier ran, e.g. an app's own
    /// transport). With one, the route's operation must be in its scopes, the device binding must hold
    /// and, on an existing key, its subject must be the key's owner (FORBIDDEN otherwise, session.md §9.1–9.3);
    /// keygen and import record the subject as the owner in the commit transaction.
    /// `clientAddress`: the app's address as the session.md §9.5 limits count it (nil: not known); trio's A forwards
    /// it to B in LINK_OPEN (B counts a shared subject per address, second review finding 5).
    package func run(connection: some NodeStepConnection, route: NodeStepRoute, token: [UInt8]? = nil,
                     principal: Principal? = nil, clientAddress: String? = nil) async -> NodeStepReport {
        guard party.servesApps else {
            await connection.close(code: 1011, reason: "not an entry node")
            return .failed(.unsupportedOperation)
        }
        let inbox = NodeInbox(deadlines: deadlines)
        inbox.attach(connection, as: .app)
        defer { inbox.stop() }
        guard case .message(let first, .app) = await inbox.next(timeout: setupTimeout) else {
            await connection.close(code: 1002, reason: "no setup")
            return .failed(.timeout)
        }
        let now = clock()
        let context = validationContext(algorithm: route.algorithm, operation: route.operation, params: route.params,
                                        token: .accepted, now: now)
        let step: AdmittedStep
        do throws(StepEnded) {
            step = try await admitSetup(first, context: context, principal: principal, address: clientAddress,
                                        connection: connection)
        } catch {
            return error.report
        }
        let report: NodeStepReport
        switch party {
        case .duo: report = await serveOneConnection(step, now: now, connection: connection, inbox: inbox)
        case .trio(let identity):
            report = await serveEntry(step, identity: identity, token: token, clientAddress: clientAddress, now: now,
                                      connection: connection, inbox: inbox)
        }
        await step.finish()
        return report
    }

    // MARK: - Stages 1 and 2

    /// A step that ended before its protocol ran: the report of its refusal (the REJECT is sent).
    struct StepEnded: Error {
        let report: NodeStepReport
    }

    /// The validation context of a SETUP on `operation`'s route at this node.
    func validationContext(algorithm: SessionAlgorithm, operation: SessionOperation, params: String?,
                           token: SetupValidationContext.TokenVerdict, now: UInt64) -> SetupValidationContext {
        SetupValidationContext(token: token, mode: party.mode, algorithm: algorithm, operation: operation, params: params,
                               nodeIndex: party.index, servedOperations: party.servedOperations,
                               cloudKey: party.trustedKey.bytes, groupID: party.groupID, now: now)
    }

    // MARK: - Stage 3 over one connection (duo's node, trio's B)

    /// Duo's node and trio's B: every frame of the step comes and goes over `connection` (the app's; at B,
    /// A's link, which carries the app's frames and A's). Duo's ACCEPT travels with the node's first
    /// protocol messages; B sends its ACCEPT first and waits for A's before any P2P to A (session.md §4.4).
    func serveOneConnection(_ step: AdmittedStep, now: UInt64, connection: some NodeStepConnection,
                            inbox: NodeInbox) async -> NodeStepReport {
        let setup = step.setup
        var run: NodeProtocolRun?
        // Only reconcile runs no protocol (as at A, `NodeStepRunner+Relay`); any other operation without a node run is
        // refused by `makeRun` (audit of issue 34 item 2, LOW-2: "no run" must not mean "reconcile").
        if setup.operation != .reconcile {
            do { run = try makeRun(setup, current: step.current) } catch {
                return await reject(SetupRejection(.invalidParameter), setup: setup, connection: connection)
            }
        }
        let keys = SessionKeyPair()
        var channel: PartyFrameChannel
        do {
            channel = try PartyFrameChannel(local: party.index, setupFrame: setup.frame, setup: setup.payload, keys: keys,
                                            trust: party.trust(now: now), protocolTags: run?.receivableTags ?? [])
        } catch {
            return await reject(SetupRejection(.invalidParameter), setup: setup, connection: connection)
        }
        let sources: Set<PartyIndex> = party.otherNode.map { [0, $0] } ?? [0]
        let send = Self.sender(connection)
        let read: SessionDriver.Read = { [frameTimeout] () throws(SilentShardError) in
            switch await inbox.next(timeout: frameTimeout) {
            case .message(let bytes, _): return SessionDriver.Incoming(bytes: bytes, link: sources)
            case .closed: throw .network(.connectionLost)
            case .timeout: throw .timeout
            }
        }
        let accept = channel.acceptFrame(payload: acceptPayload(setup, keys: keys, now: now, status: step.status),
                                         nodeKey: party.nodeKey)
        let report: NodeStepReport
        do throws(SilentShardError) {
            var leading = [accept]
            if let other = party.otherNode {
                try await send([accept])
                leading = []
                try channel.ingestConsuming(frames: step.early, link: [0])
                if setup.participants.contains(other) {
                    _ = try await SessionDriver.awaitControl(.accept, from: other, channel: &channel, read: read)
                }
            } else {
                try channel.ingestConsuming(frames: step.early, link: [0])
            }
            if let run {
                report = await participate(setup: setup, run: run, channel: &channel, leading: leading, send: send,
                                           read: read, relay: Self.noRelay, owner: step.owner)
            } else {
                if !leading.isEmpty { try await send(leading) }
                report = await reconcileRunning(setup, channel: &channel, send: send, read: read, relay: Self.noRelay,
                                                owner: step.owner)
            }
        } catch {
            if channel.peerAbort == nil, let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                try? await send([frame])
            }
            await nodeBans.banIfRequired(error, setup: setup)
            await connection.close(code: 1011, reason: "aborted")
            return .failed(error)
        }
        if case .failed = report {
            await connection.close(code: 1011, reason: "aborted")
        } else {
            await connection.close(code: 1000, reason: "done")
        }
        return report
    }

    // MARK: - Helpers

    /// Sends a bundle of frames on `connection`; a failure is the connection lost.
    static func sender(_ connection: some NodeStepConnection) -> SessionDriver.Send {
        { (frames: [Frame]) throws(SilentShardError) in
            do { try await connection.send(Data(Frame.bundle(frames))) } catch { throw .network(.connectionLost) }
        }
    }

    /// The relay of a node that relays nothing.
    static var noRelay: SessionDriver.Relay { { _ throws(SilentShardError) in } }

    func acceptPayload(_ setup: ValidatedSetup, keys: SessionKeyPair, now: UInt64, status: KeyStatus?) -> AcceptPayload {
        AcceptPayload(setupHash: setup.setupHash, nodeKey: party.nodeKey.verifyingKey, certificate: party.certificate,
                      sessionKeys: keys.publicKeys, nodeTime: now, keyStatus: status)
    }

    /// A signed REJECT from this node (trio: with its certificate, so the app can authenticate it).
    func rejectFrame(_ rejection: SetupRejection, instanceID: InstanceID, setupHash: SetupHash?) -> Frame {
        let payload = RejectPayload(code: rejection.code, retryAfterSeconds: rejection.retryAfterSeconds,
                                    setupHash: setupHash, nodeKey: party.nodeKey.verifyingKey,
                                    certificate: party.certificate, detail: rejection.detail).encoded()
        let header = FrameHeader(kind: .reject, sender: party.index, receiver: 0, length: UInt32(payload.count),
                                 instanceID: instanceID)
        return Frame.signed(header: header, payload: payload, key: party.nodeKey)
    }

    /// Sends REJECT on `connection` (the app's, or A's link at B) and closes it.
    func reject(_ rejection: SetupRejection, instanceID: InstanceID, setupHash: SetupHash?,
                connection: some NodeStepConnection) async -> NodeStepReport {
        let frame = rejectFrame(rejection, instanceID: instanceID, setupHash: setupHash)
        try? await connection.send(Data(frame.encoded()))
        await connection.close(code: 1008, reason: "rejected")
        return .rejected(rejection.code)
    }

    func reject(_ rejection: SetupRejection, setup: ValidatedSetup, connection: some NodeStepConnection) async -> NodeStepReport {
        await reject(rejection, instanceID: setup.instanceID, setupHash: setup.setupHash, connection: connection)
    }

    /// session.md §9.4: this process's bans with this node's store.
    var nodeBans: NodeBans { NodeBans(ledger: bans, store: store, queue: storeQueue, party: party.recordLabel) }

    func onStoreQueue<T: Sendable>(_ body: @escaping @Sendable () throws(NodeStoreError) -> T) async throws(NodeStoreError) -> T {
        try await storeQueue.run(body)
    }

    /// Runs `body` on the store queue (any error).
    func onStoreQueueAny<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await storeQueue.run(body)
    }
}
