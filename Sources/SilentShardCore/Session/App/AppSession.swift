import Foundation
import MPCCrypto
import MPCProtocols

/// The routes of the operations every mode has, from the facade's action provider.
package struct AppActions: Sendable {
    package var keygen: @Sendable () -> any NetworkAction
    package var refresh: @Sendable () -> any NetworkAction
    package var sign: @Sendable () -> any NetworkAction
    package var importKey: @Sendable () -> any NetworkAction
    package var reconcile: @Sendable () -> any NetworkAction

    package init(keygen: @escaping @Sendable () -> any NetworkAction, refresh: @escaping @Sendable () -> any NetworkAction,
                 sign: @escaping @Sendable () -> any NetworkAction, importKey: @escaping @Sendable () -> any NetworkAction,
                 reconcile: @escaping @Sendable () -> any NetworkAction) {
        self.keygen = keygen
        self.refresh = refresh
        self.sign = sign
        self.importKey = importKey
        self.reconcile = reconcile
    }
}

/// The app's side of a session for one algorithm, one code for duo and trio: `DuoSession` and
/// `TrioSession` are facades over it (the seeds fix their public API). It runs the operations every mode
/// has — keygen, refresh, import, sign, reconcile (`AppSession+Operations.swift`,
/// `AppSession+Reconcile.swift`) — with the commit of session.md §7.2, the in-doubt recovery of session.md §5.3 and the
/// bans of session.md §9.4 (`AppSession+Bans.swift`), and gives trio's own operations (preSign, export, recover,
/// hardDerivation) the same step primitives: `step`, `accepted`, `runProtocol`, `aborting`, `commit`.
///
/// What differs by mode is data: the participants (`allParties`), whether a keyshare records a group,
/// the stored-share format (`AppStoredShare`), and where a banned node is refused (duo: before
/// connecting, its node key is the cloud key; trio: after the ACCEPTs, whose certificates name the
/// nodes' keys).
package final class AppSession: Sendable {
    package let engine: AppStepEngine
    package let storageClient: any StorageClient
    package let actions: AppActions
    private let transport: UncheckedTransport
    /// The app's `BackupSink` (`AppSession+Backups.swift`).
    let sinkBox = LockedValue<(any BackupSink)?>(nil)
    /// The app's logger and the operation tally (`AppSession+Events.swift`).
    package let events: AppEvents

    package init(mode: SessionMode, algorithm: Keyshare.Algorithm, messageSigner: any MessageSigner, cloudVerifyingKey: String,
                 storageClient: any StorageClient, networkClient: any NetworkClient, actions: AppActions,
                 deviceClock: @escaping MillisecondClock, deadlines: AppDeadlines = .system) {
        let events = AppEvents()
        self.events = events
        engine = AppStepEngine(mode: mode, algorithm: algorithm, messageSigner: messageSigner,
                               cloudVerifyingKey: cloudVerifyingKey, clock: SessionClock(device: deviceClock), events: events,
                               deadlines: deadlines)
        self.storageClient = storageClient
        self.actions = actions
        transport = UncheckedTransport(networkClient)
    }

    package var mode: SessionMode { engine.mode }
    package var algorithm: Keyshare.Algorithm { engine.algorithm }
    /// The device's wall clock corrected from a node's time in an authenticated STALE_TIMESTAMP (session.md §5.3, §9.6).
    package var clock: SessionClock { engine.clock }
    /// The session's transport (for the POST routes: duo's export is the app's own, trio's preSignFinal).
    package var client: any NetworkClient { transport.client }
    /// Every party of the mode: the share-changing operations run with all of them.
    package var allParties: [PartyIndex] { mode == .duo ? [0, 1] : [0, 1, 2] }

    /// Throws `invalidKeyshare` unless `keyshare` is the app's share of a key of this session's mode and
    /// algorithm (trio: with its nodes' group).
    package func check(_ keyshare: Keyshare) throws(SilentShardError) {
        guard keyshare.algorithm == algorithm, keyshare.mode == mode, keyshare.party == 0,
              mode == .duo || keyshare.groupId != nil
        else { throw .invalidKeyshare(reason: "not an app keyshare of a \(mode) \(algorithm) key") }
    }

    // MARK: - Step primitives

    /// One step over the engine: the SETUP `fill` completes, then `body` on the step's connection (which
    /// sends the SETUP: `accepted` or `runProtocol`). Without a keyshare (recover) `keyIdParam` is the
    /// route's key id and `groupID` the pinned group, if the caller has them.
    package func step<Outcome>(_ operation: SessionOperation, action: any NetworkAction, existing: Keyshare?,
                               participants: [PartyIndex], keyIdParam: String? = nil, groupID: [UInt8]? = nil,
                               fill: (inout SetupPayload) -> Void,
                               body: (inout PartyFrameChannel, AppStepLink) async throws(SilentShardError) -> Outcome)
        async throws(SilentShardError) -> Outcome {
        let step = AppStepEngine.Step(operation, action: action, participants: participants, params: existing?.keyId ?? keyIdParam,
                                      recordedGroup: existing?.groupId.map { [UInt8]($0) } ?? groupID)
        return try await engine.run(step, client: transport.client, fill: fill,
                                    beforeConnect: { [self] (cloudKey: Ed25519.VerifyingKey) throws(SilentShardError) in
                                        // Duo: the node's key is usually the cloud key itself, known before
                                        // connecting (a certified node key is checked after its ACCEPT).
                                        if mode == .duo { try await refuseIfBanned(nodeKey: cloudKey, node: 1, operation: operation) }
                                    },
                                    body: body)
    }

    /// Sends the SETUP (with `flight`, the first-round broadcasts that may travel with it, session.md §5.2), then
    /// waits for every participating node's ACCEPT (a REJECT ends the step) and refuses a node this app
    /// banned (session.md §9.4) by the key its ACCEPT carries — in duo too: a duo ACCEPT may carry a node key
    /// certified under the cloud key rather than the cloud key itself, and a ban is recorded under the
    /// ACCEPT's key. A failure after the SETUP aborts (`aborting`).
    package func accepted(channel: inout PartyFrameChannel, link: AppStepLink, flight: [Frame] = []) async throws(SilentShardError) {
        try await link.send([link.setupFrame] + flight)
        try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
            for node in link.nodes { _ = try await SessionDriver.awaitControl(.accept, from: node, channel: &channel, read: link.read) }
            try await refuseBannedNodes(link.nodes, operation: link.operation, cloudKey: link.cloudKey, channel: &channel,
                                        send: link.send)
        }
    }

    /// Makes a step's protocol run from the session's instance id, setup hash and the nodes' group id
    /// (nil in duo).
    package typealias RunFactory<Outcome: Sendable> = (InstanceID, SetupHash, [UInt8]?, inout any RandomNumberGenerator)
        throws(ProtocolError) -> any SessionRun<Outcome>

    /// Runs the protocol `makeRun` makes. When its first round is short (FROST), that round runs first and
    /// its broadcasts travel with the SETUP (flight F1, session.md §5.2); a DKLs23 first round takes
    /// milliseconds and runs after the ACCEPTs, so that the SETUP never waits for it. A new trio key records
    /// the group its nodes' certificates carry once the ACCEPTs arrived. First-round P2P messages need the
    /// nodes' session keys and follow the ACCEPTs in any case. A failure after the SETUP aborts the step.
    package func runProtocol<Outcome>(channel: inout PartyFrameChannel, link: AppStepLink,
                                      _ makeRun: RunFactory<Outcome>) async throws(SilentShardError) -> Outcome {
        let instanceID = channel.instanceID, setupHash = channel.receiver.setupHash
        func make(_ group: [UInt8]?) throws(SilentShardError) -> any SessionRun<Outcome> {
            do throws(ProtocolError) {
                var rng = SessionRandomness.system.generator()
                return try makeRun(instanceID, setupHash, group, &rng)
            } catch { throw SilentShardError(error) }
        }
        // A new trio key's group comes with the nodes' certificates (in their ACCEPTs). The rounds never use
        // it — it is only recorded in the resulting keyshare — so the run is made now for every mode, a short
        // first round travels with the SETUP, and the group is recorded once the ACCEPTs named it (issue 20:
        // trio FROST keygen was one round trip above its floor).
        let groupFromAccepts = mode == .trio && link.recordedGroup == nil
        var run = try make(link.recordedGroup)
        var unsent: [ProtocolMessage]?
        var flight: [Frame] = []
        if run.roundsAreShort {
            let messages = try await SessionDriver.start(&run)
            flight = try channel.frames(for: messages.filter { $0.to == nil })
            unsent = messages.filter { $0.to != nil }
        }
        try await accepted(channel: &channel, link: link, flight: flight)
        return try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
            if groupFromAccepts {
                guard let first = link.nodes.first, let group = channel.receiver.accepts[first]?.certificate?.groupID else {
                    throw .cloudVerificationFailed(reason: "certificateMissing")
                }
                run.recordGroup(group)
            }
            if let unsent {
                return try await SessionDriver.run(started: run, unsent: unsent, channel: &channel, send: link.send, read: link.read)
            }
            return try await SessionDriver.run(run, channel: &channel, send: link.send, read: link.read)
        }
    }

    /// Runs `body`; a failure is sent to the nodes as our ABORT (session.md §0; not after a node's ABORT or a
    /// REJECT) and a ban it calls for is recorded (session.md §9.4) before it is thrown.
    package func aborting<T>(channel: inout PartyFrameChannel, link: AppStepLink,
                             _ body: (inout PartyFrameChannel) async throws(SilentShardError) -> T) async throws(SilentShardError) -> T {
        do {
            return try await body(&channel)
        } catch {
            if channel.peerAbort == nil, !Self.isRejection(error),
               let frame = try? channel.control(.abort, payload: AbortPayload(for: error).encoded) {
                try? await link.send([frame])
            }
            await recordBanIfRequired(error, channel: channel)
            throw error
        }
    }

    /// session.md §7.2 at the app (`AppCommit`, the mode's policy): stage durably, send COMMIT(D), promote on
    /// OUTCOME(committed, D) from every node; roll back when every node answered ABORT or
    /// OUTCOME(aborted); anything else leaves the share staged (in doubt → `reconcileRequired`).
    package func commit(_ keyshare: Keyshare, channel: inout PartyFrameChannel,
                        link: AppStepLink) async throws(SilentShardError) -> Keyshare {
        let mode = mode
        return try await AppCommitExecutor.commit(keyshare, policy: mode == .duo ? .duo : .trio, nodes: link.nodes,
                                                  channel: &channel,
                                                  storage: { [self] digest in
                                                      var storage = AppCommitExecutor.Storage(
                                                          storageClient, keyId: keyshare.keyId,
                                                          staging: AppStoredShare.encode(keyshare, digest: digest, mode: mode))
                                                      storage.promote = promoting(keyshare, promote: storage.promote)
                                                      return storage
                                                  }, send: link.send, read: link.read)
    }

    private static func isRejection(_ error: SilentShardError) -> Bool {
        switch error {
        case .peerUnavailable, .rejected, .keyNotFound, .staleKeyshare, .deviceNotRegistered, .partyBanned, .deviceBanned: return true
        default: return false
        }
    }
}
