import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Node A: the app's entry point and B's relay (`docs/protocol/session.md` §6.1).
extension NodeStepRunner {
    /// Stage 3 at node A, after the app's SETUP was admitted: when B participates, the link to B
    /// (LINK_OPEN, then the SETUP byte for byte, session.md §2.3, §6.1 rule 3) and B's ACCEPT (or B's REJECT,
    /// relayed); then A takes part in and relays the session: frames between the app and B pass
    /// unchanged in each sender's order; A consumes what is addressed to it. A session with S = {0, 2}
    /// is relayed only. If the link to B fails, A answers REJECT(PEER_UNAVAILABLE), also after ACCEPTs.
    /// `clientAddress`: the app's, as this node's limits count it; B is told it in LINK_OPEN.
    func serveEntry(_ step: AdmittedStep, identity: TrioNodeIdentity, token: [UInt8]?, clientAddress: String?, now: UInt64,
                    connection: some NodeStepConnection, inbox: NodeInbox) async -> NodeStepReport {
        let setup = step.setup
        func reject(_ code: WireCode) async -> NodeStepReport {
            await self.reject(SetupRejection(code), setup: setup, connection: connection)
        }
        let participates = !setup.isRelayOnly
        let keys: SessionKeyPair? = participates ? SessionKeyPair() : nil
        var run: NodeProtocolRun?
        if participates, setup.operation != .reconcile {
            do { run = try makeRun(setup, current: step.current) } catch { return await reject(.invalidParameter) }
        }
        var channel: PartyFrameChannel
        do {
            channel = try PartyFrameChannel(local: 1, setupFrame: setup.frame, setup: setup.payload, keys: keys,
                                            trust: party.trust(now: now), protocolTags: run?.receivableTags ?? [], relays: true)
        } catch {
            return await reject(.invalidParameter)
        }
        // Step 12: the link to B, when B participates.
        let withB = setup.participants.contains(2)
        var link: (any NodeStepConnection)?
        var toApp: [Frame] = []
        if withB {
            guard let peer, let opened = try? await peer.openLink() else { return await reject(.peerUnavailable) }
            link = opened
            inbox.attach(opened, as: .peer)
            do {
                try await opened.send(Data(TrioLink.openFrame(identity: identity, setup: setup, token: token, now: now,
                                                                    clientAddress: clientAddress).encoded()))
                try await opened.send(Data(setup.frame.encoded()))
            } catch {
                await opened.close(code: 1011, reason: "link")
                return await reject(.peerUnavailable)
            }
            // B's ACCEPT (relayed with A's own) or B's REJECT (relayed, end).
            // A participant authenticates B's ACCEPT (session.md §4.4: nodes check each other's ACCEPTs); a
            // relay-only A passes it on unread.
            var acceptedByB = false
            while !acceptedByB {
                switch await inbox.next(timeout: frameTimeout) {
                case .message(let bytes, .peer):
                    let ingested = channel.ingest(bytes, link: [2])
                    toApp += ingested.forwards.filter { $0.to == 0 }.map(\.frame)
                    acceptedByB = channel.receiver.hasOpened(2)
                        || ingested.forwards.contains { $0.frame.header.kind == .accept && $0.frame.header.sender == 2 }
                    if ingested.failure != nil {
                        await opened.close(code: 1000, reason: "done")
                        if let rejectFrame = toApp.last, rejectFrame.header.kind == .reject {
                            try? await connection.send(Data(Frame.bundle(toApp)))
                            await connection.close(code: 1008, reason: "rejected")
                            let code = (try? RejectPayload(bytes: rejectFrame.body))?.code ?? .peerUnavailable
                            return .rejected(code)
                        }
                        return await reject(.peerUnavailable)
                    }
                case .message(let bytes, .app):
                    // Early app frames (allowed behind SETUP) are checked and relayed like any other.
                    let ingested = channel.ingest(bytes, link: [0])
                    for forward in ingested.forwards where forward.to == 2 { try? await opened.send(Data(forward.frame.encoded())) }
                    if let failure = ingested.failure {
                        await opened.close(code: 1011, reason: "aborted")
                        await connection.close(code: 1011, reason: "aborted")
                        return .failed(failure)
                    }
                case .closed(.app):
                    await opened.close(code: 1011, reason: "app gone")
                    return .failed(.network(.connectionLost))
                case .closed(.peer), .timeout:
                    await opened.close(code: 1011, reason: "peer unavailable")
                    return await reject(.peerUnavailable)
                }
            }
        }
        let send: SessionDriver.Send = { (frames: [Frame]) throws(SilentShardError) in
            try await Self.route(frames.map { ($0, $0.header.receiver) }, app: connection, link: link, withB: withB)
        }
        let relay: SessionDriver.Relay = { (forwards: [(frame: Frame, to: PartyIndex)]) throws(SilentShardError) in
            try await Self.route(forwards.map { ($0.frame, $0.to) }, app: connection, link: link, withB: withB)
        }
        let read: SessionDriver.Read = { [frameTimeout] () throws(SilentShardError) in
            switch await inbox.next(timeout: frameTimeout) {
            case .message(let bytes, .app): return SessionDriver.Incoming(bytes: bytes, link: [0])
            case .message(let bytes, .peer): return SessionDriver.Incoming(bytes: bytes, link: [2])
            case .closed(.app): throw .network(.connectionLost)
            case .closed(.peer): throw .peerUnavailable(party: .node(2))
            case .timeout: throw .timeout
            }
        }
        let report: NodeStepReport
        if let keys {
            let accept = channel.acceptFrame(payload: acceptPayload(setup, keys: keys, now: now, status: step.status),
                                             nodeKey: identity.nodeKey)
            // A's ACCEPT with B's to the app; to B on the link (before any P2P between the nodes, session.md §4.4).
            let leading = [(accept, accept.header.receiver)] + toApp.map { ($0, PartyIndex(0)) }
            // session.md §6.1 rule 4 already here: B lost while A sends its ACCEPT or the app's early frames is
            // REJECT(PEER_UNAVAILABLE) too (found by NodeKillTests.bRunning: a bare close before).
            func failed(_ error: SilentShardError) async -> NodeStepReport {
                if Self.isLinkFailure(error) {
                    let frame = rejectFrame(SetupRejection(.peerUnavailable), instanceID: setup.instanceID, setupHash: setup.setupHash)
                    try? await connection.send(Data(frame.encoded()))
                }
                await closeAll(connection, link)
                return .failed(error)
            }
            do {
                try await Self.route(leading, app: connection, link: link, withB: withB)
            } catch {
                return await failed(error)
            }
            // The app's early frames behind its SETUP (session.md §4.2: first-round broadcasts) pass session.md §3.5 here
            // and go on to B like any later frame.
            let early = channel.ingest(frames: step.early, link: [0])
            if let failure = early.failure { return await failed(failure) }
            do { try await relay(early.forwards) } catch {
                return await failed(error)
            }
            if let run {
                report = await participate(setup: setup, run: run, channel: &channel, leading: [], send: send,
                                           read: read, relay: relay, owner: step.owner)
            } else {
                report = await reconcileRunning(setup, channel: &channel, send: send, read: read, relay: relay,
                                                owner: step.owner)
            }
        } else {
            let early = channel.ingest(frames: step.early, link: [0])
            do throws(SilentShardError) {
                try await Self.route(toApp.map { ($0, 0) }, app: connection, link: link, withB: withB)
                try await relay(early.forwards)
                if let failure = early.failure { throw failure }
            } catch {
                await closeAll(connection, link)
                return .failed(error)
            }
            report = await relayOnly(channel: &channel, read: read, relay: relay)
        }
        // session.md §6.1 rule 4: a relay that lost B answers REJECT(PEER_UNAVAILABLE), also after ACCEPTs.
        if case .failed(let error) = report, Self.isLinkFailure(error) || (withB && error == .timeout) {
            let frame = rejectFrame(SetupRejection(.peerUnavailable), instanceID: setup.instanceID, setupHash: setup.setupHash)
            try? await connection.send(Data(frame.encoded()))
        } else if withB, participates {
            // Keep relaying B's remaining frames (its OUTCOME, its finish) until B or the app closes.
            await drain(channel: &channel, read: read, relay: relay)
        }
        await closeAll(connection, link)
        return report
    }

    /// S = {0, 2}: A only relays, until the app's DONE passed and B closed, or either side is gone.
    private func relayOnly(channel: inout PartyFrameChannel, read: SessionDriver.Read,
                           relay: SessionDriver.Relay) async -> NodeStepReport {
        var completed = false
        while true {
            let incoming: SessionDriver.Incoming
            do { incoming = try await read() } catch {
                if completed { return .relayed(completed: true) }
                if case .network = error { return .relayed(completed: false) }
                return .failed(.peerUnavailable(party: .node(2)))
            }
            let ingested = channel.ingest(incoming.bytes, link: incoming.link)
            if ingested.forwards.contains(where: { $0.frame.header.kind == .done }) { completed = true }
            do { try await relay(ingested.forwards) } catch { return .failed(error) }
            if ingested.failure != nil { return .relayed(completed: completed) }
        }
    }

    /// After A's own ending, passes on what is still in flight between the app and B.
    private func drain(channel: inout PartyFrameChannel, read: SessionDriver.Read, relay: SessionDriver.Relay) async {
        while let incoming = try? await read() {
            let ingested = channel.ingest(incoming.bytes, link: incoming.link)
            guard (try? await relay(ingested.forwards)) != nil, ingested.failure == nil else { return }
        }
    }

    /// Sends frames by receiver: 0 → app; 2 → B; 0xFF → both (B only when it participates). Consecutive
    /// frames to one side go in one message, preserving each sender's order.
    static func route(_ frames: [(Frame, PartyIndex)], app: some NodeStepConnection, link: (any NodeStepConnection)?,
                      withB: Bool) async throws(SilentShardError) {
        var toApp: [Frame] = [], toPeer: [Frame] = []
        for (frame, receiver) in frames {
            switch receiver {
            case 0: toApp.append(frame)
            case 2: toPeer.append(frame)
            default:
                toApp.append(frame)
                if withB { toPeer.append(frame) }
            }
        }
        if !toPeer.isEmpty {
            guard let link else { throw .peerUnavailable(party: .node(2)) }
            do { try await link.send(Data(Frame.bundle(toPeer))) } catch { throw .peerUnavailable(party: .node(2)) }
        }
        if !toApp.isEmpty {
            do { try await app.send(Data(Frame.bundle(toApp))) } catch { throw .network(.connectionLost) }
        }
    }

    private func closeAll(_ app: some NodeStepConnection, _ link: (any NodeStepConnection)?) async {
        await link?.close(code: 1000, reason: "done")
        await app.close(code: 1000, reason: "done")
    }
}
