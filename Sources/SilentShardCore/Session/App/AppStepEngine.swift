import Foundation
import MPCCrypto
import MPCProtocols

/// One step's connection as a step's body sees it: the signed SETUP (the body sends it, alone or with
/// its first flight) and the transport, whose messages come from the participating nodes (`nodes`;
/// in trio all through node A).
package struct AppStepLink {
    package let operation: SessionOperation
    /// The cloud key the step's ACCEPTs are verified under (parsed once per step).
    package let cloudKey: Ed25519.VerifyingKey
    package let setupFrame: Frame
    package let nodes: [PartyIndex]
    /// The group the app has recorded for the key (trio), known before any ACCEPT.
    package let recordedGroup: [UInt8]?
    package let send: SessionDriver.Send
    package let read: SessionDriver.Read
}

/// The app's side of one step (`docs/protocol/session.md` §5.3), the same for every mode: configuration checks,
/// the device-signed SETUP, the step's channel, one step at a time per session (the transport carries
/// one connection), connect → body → disconnect, with session.md §5.3 clock correction and session.md §10 KEY_BUSY backoff
/// (`StepRetryPolicy`). `DuoSession` and `TrioSession` are facades over it; what differs by mode is the
/// participants, the group a keyshare records, and the body.
package struct AppStepEngine: Sendable {
    package let mode: SessionMode
    package let algorithm: SessionAlgorithm
    package let messageSigner: any MessageSigner
    package let cloudVerifyingKey: String
    /// The device's wall clock corrected from a node's time in an authenticated STALE_TIMESTAMP (session.md §5.3, §9.6).
    package let clock: SessionClock
    /// Where each step's `stepFinished` event goes.
    package let events: AppEvents
    /// How the step deadline waits (tests inject theirs).
    package let deadlines: AppDeadlines
    private let gate = StepGate()

    package init(mode: SessionMode, algorithm: SessionAlgorithm, messageSigner: any MessageSigner, cloudVerifyingKey: String,
                 clock: SessionClock, events: AppEvents = AppEvents(), deadlines: AppDeadlines = .system) {
        self.events = events
        self.deadlines = deadlines
        self.mode = mode
        self.algorithm = algorithm
        self.messageSigner = messageSigner
        self.cloudVerifyingKey = cloudVerifyingKey
        self.clock = clock
    }

    /// What a step is: its operation and route, the participants, the key id of the route (`params`),
    /// the group the app has recorded for the key (trio), and the SETUP fields of the operation.
    package struct Step {
        package var operation: SessionOperation
        package var action: any NetworkAction
        package var participants: [PartyIndex]
        package var params: String?
        package var recordedGroup: [UInt8]?

        package init(_ operation: SessionOperation, action: any NetworkAction, participants: [PartyIndex], params: String?,
                     recordedGroup: [UInt8]? = nil) {
            self.operation = operation
            self.action = action
            self.participants = participants
            self.params = params
            self.recordedGroup = recordedGroup
        }
    }

    /// Runs `step` over `client` (retrying as `StepRetryPolicy` decides). `beforeConnect` runs with the
    /// cloud key once the SETUP is built (duo refuses a banned node there); `body` runs on the
    /// connection.
    package func run<Outcome>(_ step: Step, client: any NetworkClient, fill: (inout SetupPayload) -> Void,
                              beforeConnect: (Ed25519.VerifyingKey) async throws(SilentShardError) -> Void = { _ throws(SilentShardError) in },
                              body: (inout PartyFrameChannel, AppStepLink) async throws(SilentShardError) -> Outcome)
        async throws(SilentShardError) -> Outcome {
        try await StepRetryPolicy.run(clock: clock, tokenRefresher: client as? any TokenRefreshingClient,
                                      wait: deadlines.backoff) { () throws(SilentShardError) in
            try await attempt(step, client: client, fill: fill, beforeConnect: beforeConnect, body: body)
        }
    }

    private func attempt<Outcome>(_ step: Step, client: any NetworkClient, fill: (inout SetupPayload) -> Void,
                                  beforeConnect: (Ed25519.VerifyingKey) async throws(SilentShardError) -> Void,
                                  body: (inout PartyFrameChannel, AppStepLink) async throws(SilentShardError) -> Outcome)
        async throws(SilentShardError) -> Outcome {
        // Configuration before any connection (session.md §1.2).
        let cloudKey: Ed25519.VerifyingKey
        do { cloudKey = try CloudVerifyingKey.parse(cloudVerifyingKey) } catch { throw SilentShardError(error) }
        let deviceKey: DeviceKey
        do { deviceKey = try DeviceKey(signer: messageSigner) } catch { throw .invalidConfiguration(reason: "device key") }
        let keys = SessionKeyPair()
        let instanceID = InstanceID.random()
        let now = clock.milliseconds
        var setup = SetupPayload(mode: mode, algorithm: algorithm, operation: step.operation, timestamp: now,
                                 deviceKey: deviceKey, sessionKeys: keys.publicKeys, cloudKey: cloudKey.bytes,
                                 participants: PartySet(step.participants))
        if let recordedGroup = step.recordedGroup { setup.groupID = recordedGroup }
        fill(&setup)
        let setupFrame: Frame
        do { setupFrame = try await setup.signedFrame(instanceID: instanceID, signer: messageSigner) }
        catch let error as SessionError { throw SilentShardError(error) }
        catch { throw .authenticationFailed(reason: "device signer failed") }
        var channel = try PartyFrameChannel(
            local: 0, setupFrame: setupFrame, setup: setup, keys: keys,
            trust: .init(cloudKey: cloudKey, nowSeconds: now / 1000, recordedGroupID: step.recordedGroup),
            protocolTags: SessionRuns.receivableTags(operation: step.operation, algorithm: algorithm))
        try await beforeConnect(cloudKey)

        if Task.isCancelled { throw .cancelled }
        await gate.acquire()
        let tally = ByteTally(addingTo: ByteTally.current), start = ContinuousClock.now
        // session.md §5.3 / issue 22: the step ends with `timeout` at its deadline (WebsocketConfig.stepTimeout).
        let timeout = (client as? any StepTimeoutConfigurable).map { $0.stepTimeout } ?? WebsocketConfig.defaultStepTimeout
        let deadline = timeout.map { start + $0 }
        let transport = UncheckedTransport(client)
        let deadlines = deadlines
        func finished(_ error: SilentShardError?) {
            events.emit(SilentShardEvent(phase: .stepFinished, operation: step.operation.eventName, mode: mode, algorithm: algorithm,
                                         keyId: step.params, bytesSent: tally.sent, bytesReceived: tally.received,
                                         duration: ContinuousClock.now - start, errorKind: error?.kind))
        }
        do {
            let action = UncheckedAction(step.action), params = step.params
            try await deadlines.run(until: deadline) { try await transport.client.connect(action: action.value, params: params) }
        } catch {
            await gate.release()
            let failure = Self.networkError(error)
            finished(failure)
            throw failure
        }
        // Everything arrives from the participating nodes (trio: through node A, session.md §3.5 step 2).
        let nodes = step.participants.filter { $0 != 0 }
        let from = Set(mode == .duo ? [1] : [1, 2] as [PartyIndex])
        let link = AppStepLink(operation: step.operation, cloudKey: cloudKey, setupFrame: setupFrame, nodes: nodes,
                               recordedGroup: step.recordedGroup, send: { (frames: [Frame]) throws(SilentShardError) in
            let bundle = Frame.bundle(frames)
            do {
                if Task.isCancelled, frames.allSatisfy({ $0.header.kind == .abort }) {
                    // A cancelled step still tells the nodes it aborts (session.md §0): the ABORT goes out on a task
                    // that is not cancelled (the step waits for it, so the client is not shared).
                    try await Task { try await transport.client.send(bytes: Data(bundle)) }.value
                } else {
                    try await client.send(bytes: Data(bundle))
                }
            } catch { throw Self.networkError(error) }
            tally.add(sent: bundle.count)
        }, read: { () throws(SilentShardError) in
            do {
                let bytes = [UInt8](try await deadlines.run(until: deadline) { try await transport.client.read() })
                tally.add(received: bytes.count)
                return SessionDriver.Incoming(bytes: bytes, link: from)
            } catch {
                throw Self.networkError(error)
            }
        })
        let outcome: Result<Outcome, SilentShardError>
        do throws(SilentShardError) {
            outcome = .success(try await body(&channel, link))
        } catch {
            outcome = .failure(error)
        }
        try? await client.disconnect()
        await gate.release()
        finished(outcome.failureKindError)
        return try outcome.get()
    }

    /// A transport's error as the SDK reports it. A `SilentShardError` thrown by a transport, an app's
    /// `NetworkClient` or export relay was not parsed and authenticated by the SDK, so it never drives
    /// `StepRetryPolicy` (session.md §13.8 item 6, audit L1): a thrown `clockSkew` loses its node time (only an
    /// authenticated STALE_TIMESTAMP corrects the clock, session.md §5.3), a thrown `keyBusy` is a transport error
    /// (not retried).
    package static func networkError(_ error: any Error) -> SilentShardError {
        switch error as? SilentShardError {
        case .clockSkew?: return .clockSkew(nodeTime: nil)
        case .keyBusy?: return .network(.connectionFailed(reason: "transport error"))
        case let error?: return error
        case nil: break
        }
        if error is StepDeadlineExceeded { return .timeout }
        switch error as? NetworkError {
        case .closedByPeer(code: 4401, _)?, .httpStatus(401)?:
            // The node refused the token before reading anything (session.md §2.1 close code 4401, session.md §2.2).
            return .authenticationFailed(reason: SilentShardError.tokenRefusedReason)
        default: break
        }
        if let error = error as? NetworkError { return .network(error) }
        if error is CancellationError { return .cancelled }
        return .network(.connectionFailed(reason: "transport error"))
    }
}

/// A FIFO async lock: one step at a time per session.
package actor StepGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    package init() {}

    package func acquire() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    package func release() {
        if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
    }
}

/// A step's route, handed to the child task that races the step's deadline (`NetworkAction` is not
/// `Sendable`: it is the app's value, read once by `connect`).
struct UncheckedAction: @unchecked Sendable {
    let value: any NetworkAction
    init(_ value: any NetworkAction) { self.value = value }
}
