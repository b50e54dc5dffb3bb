import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo
import trio

/// session.md §9.4: a party whose own checks catch another cheating (AbortAndBan: a failed consistency check in
/// signing) bans it. The node bans the device key; the app bans the node key. Reconcile keeps working;
/// only an operator (node) or a deliberate deletion of the record (app) lifts a ban. The cheater misbehaves
/// with its own keys (what AbortAndBan is for), not as a network attacker.
@Suite("Bans after AbortAndBan", .serialized, .heavy, .timeLimit(.minutes(30)))
struct BanTests {
    /// Duo's signed message.
    static let message = [UInt8](repeating: 0x24, count: 32)
    /// DKLs23 signing R2 byte 300 lies inside ã: the receiver's multiplication check fails.
    static let cheat = flipping(tag: DKLsTag.signRound2Direct, offset: 300)

    /// Duo: a cheating app: a correct SETUP from the registered device, then a corrupted R2 (`corrupt`; the
    /// default flips a bit of ã). Returns the node's report and what the cheater saw. `beforeSend` runs
    /// before each of the app's protocol flights (0: R1, 1: R2) and may hold it. `runner`: the node (default: the
    /// fixture's).
    static func cheat(_ fixture: DuoFixture, keyshare: Keyshare,
                      corrupt: @escaping @Sendable (ProtocolMessage) -> ProtocolMessage = BanTests.cheat,
                      beforeSend: @escaping @Sendable (Int) async -> Void = { _ in },
                      runner: NodeStepRunner? = nil) async throws -> (NodeStepReport, SilentShardError?) {
        let device = try DeviceKey(signer: fixture.signer)
        let cloudKey = fixture.nodeKey.verifyingKey
        let keys = SessionKeyPair()
        let instanceID = InstanceID.random()
        let now = fixture.clock.milliseconds
        var setup = SetupPayload(mode: .duo, algorithm: .ecdsa, operation: .sign, timestamp: now, deviceKey: device,
                                 sessionKeys: keys.publicKeys, cloudKey: cloudKey.bytes, participants: PartySet([0, 1]))
        setup.keyID = keyshare.keyID
        setup.gen = keyshare.gen
        setup.path = DerivationPathBytes(indices: []).encoded
        setup.message = Self.message
        let setupFrame = try await setup.signedFrame(instanceID: instanceID, signer: fixture.signer)
        let setupHash = SessionHash.setupHash(headerAndPayload: setupFrame.headerAndPayload)
        let machine = try DKLsSignRun(keyshare: try keyshare.dklsKeyshare(), signers: [0, 1], instanceID: instanceID,
                                      setupHash: setupHash, path: try DerivationPath("m"), messageHash: Self.message)
        var channel = try PartyFrameChannel(local: 0, setupFrame: setupFrame, setup: setup, keys: keys,
                                            trust: .init(cloudKey: cloudKey, nowSeconds: now / 1000),
                                            protocolTags: machine.receivableTags)
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: DuoAction.ECDSA.Signature(), params: keyshare.keyId)
        try await node.connect(action: DuoAction.ECDSA.Signature(), params: keyshare.keyId)
        let runner = runner ?? fixture.runner
        let route = NodeStepRoute(algorithm: .ecdsa, operation: .sign, params: keyshare.keyId)
        let nodeTask = Task { await runner.run(connection: PipeConnection.duo(end: node), route: route) }
        func send(_ frames: [Frame]) async throws(SilentShardError) {
            do { try await app.send(bytes: Data(Frame.bundle(frames))) } catch { throw .network(.connectionLost) }
        }
        func read() async throws(SilentShardError) -> SessionDriver.Incoming {
            guard case .binary(let data)? = try? await app.readMessage() else { throw .network(.connectionLost) }
            return SessionDriver.Incoming(bytes: [UInt8](data), link: [1])
        }
        try await send([setupFrame])
        _ = try await SessionDriver.awaitControl(.accept, channel: &channel, read: read)
        var cheaterSaw: SilentShardError?
        var flights = 0
        func sendFlight(_ frames: [Frame]) async throws(SilentShardError) {
            await beforeSend(flights)
            flights += 1
            try await send(frames)
        }
        do throws(SilentShardError) { _ = try await runCorrupting(machine, channel: &channel, corrupt: corrupt, send: sendFlight, read: read) }
        catch { cheaterSaw = error }
        return (await nodeTask.value, cheaterSaw)
    }


    /// Trio: a cheater is made from an honest keyshare whose pairwise OT state with node A is corrupted, so its
    /// protocol messages are validly signed and encrypted but wrong, and the check that fails is the protocol's
    /// own, in the party that receives them.
    ///
    /// DKLs23 keyshare layout (dkls23.md §11, keyshare version 2), app = party 0 of 3: 230 header bytes,
    /// 98 per party, then per peer (ascending; peer 1 first): zero seed (32), SoftSpokenOT receiver GGM
    /// roots (64 × 32), sender Δ (32) and punctured-tree co-paths (256 × 32).
    static let peer1Block = 230 + 98 * 3
    static let peer1ReceiverRoots = peer1Block + 32
    static let peer1SenderCoPath = peer1ReceiverRoots + 64 * 32 + 32

    /// The app keyshare with the first byte of `count` 32-byte seeds from `offset` on flipped.
    static func corrupted(_ keyshare: Keyshare, seedsAt offset: Int, count: Int) throws -> Keyshare {
        var bytes = keyshare.protocolKeyshareBytes
        for k in 0..<count { bytes[offset + 32 * k] ^= 0x01 }
        return try Keyshare(algorithm: .ecdsa, mode: .trio, protocolBytes: bytes, groupId: keyshare.groupId.map { [UInt8]($0) })
    }

    /// The signed message of `mode`'s tests.
    static func signedMessage(_ mode: Keyshare.Mode) -> Data { mode == .duo ? Data(message) : Data(SHA256.hash(Array("trio ban".utf8))) }

    /// Duo: the app cheats in signing (ã of R2 flipped) and the node's multiplication check fails; trio: the app's
    /// OT-extension receiver roots toward A are wrong and A (the sender) finds û inconsistent.
    @Test(arguments: Keyshare.Mode.allCases)
    func nodeBansAnAppThatFailsItsCheck(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        let message = Self.signedMessage(mode)
        switch fixture.deployment {
        case .duo(let duo):
            let (report, cheaterSaw) = try await Self.cheat(duo, keyshare: keyshare)
            #expect(cheaterSaw != nil)
            #expect(report == .failed(.abortProtocolAndBanParty(party: .app)))
        case .trio(let trio):
            let cheating = try Self.corrupted(keyshare, seedsAt: Self.peer1ReceiverRoots, count: 64)
            await #expect(throws: SilentShardError.self) {
                _ = try await trio.session.signature(keyshare: cheating, message: message, signer: .nodeA)
            }
            #expect(trio.client.reports.last == .failed(.abortProtocolAndBanParty(party: .app)))
            #expect(try !trio.storeB.isBanned(deviceKey: device.identity))
        }
        #expect(try fixture.entryStore.isBanned(deviceKey: device.identity))

        // Every later session of the device is refused, except reconcile.
        switch fixture.deployment {
        case .duo(let duo):
            await #expect(throws: SilentShardError.self) {
                _ = try await duo.session.signature(keyshare: keyshare, message: message)
            }
            #expect(duo.client.reports.last == .rejected(.banned))
        case .trio(let trio):
            // Refused by A with either co-signer (A also refuses to relay for it), and for refresh: the device is
            // banned by A (`deviceBanned`, P4), which is not the app's own ban of A, so the default signer does not
            // fall back to B (that would be one more refused round trip through A).
            for signer in [TrioSigner.nodeA, .nodeB] {
                await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
                    _ = try await trio.session.signature(keyshare: keyshare, message: message, signer: signer)
                }
            }
            let reportsBefore = trio.client.reports.count
            await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
                _ = try await trio.session.signature(keyshare: keyshare, message: message)
            }
            #expect(trio.client.reports.count == reportsBefore + 1, "no fallback to B")
            await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
                _ = try await trio.session.keyRefresh(keyshare: keyshare)
            }
        }
        // Reconcile still runs (session.md §9.4) and changes nothing.
        let reconciled = try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation)

        // The operator lifts the ban: signing works again.
        #expect(try fixture.entryStore.liftBan(deviceKey: device.identity, operator: "test operator"))
        let signature = try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
    }

    /// Security review finding 12: the ban write was `try?` — when it failed, the ban was dropped and the
    /// cheating device went on. Now the node retries and, failing that, keeps the device banned in its
    /// memory: the device's next session is refused all the same.
    @Test func aBanTheStoreRefusesIsNotDropped() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        // Every ban insert fails (a full disk, a broken replica): reads still work.
        try SQLiteConnection(path: fixture.storePath).execute(
            "CREATE TRIGGER refuse_bans BEFORE INSERT ON bans BEGIN SELECT RAISE(ABORT, 'refused'); END")
        let (report, _) = try await Self.cheat(fixture, keyshare: keyshare)
        // The audit of issue 33 item 4 (LOW-3): a failed check whose ban is not stored ends as a storage failure,
        // not as the ban's ABORT, so the check's outcome stays in the node (ClusterCheckLeaseTests).
        #expect(report == .failed(.storage(reason: "ban")))
        #expect(try fixture.store.isBanned(deviceKey: device.identity) == false)
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Data(Self.message))
        }
        #expect(fixture.client.reports.last == .rejected(.banned))
    }

    /// Duo: a cheating node validates the SETUP like a real one, then corrupts its R2, and the app's
    /// multiplication check fails; trio: the app's OT-extension sender state toward A is wrong, so A's (honest) û
    /// fails the app's check: to the app, A cheated. Either way the app aborts with AbortAndBan(node 1) and
    /// records the ban on that node's key.
    @Test(arguments: Keyshare.Mode.allCases)
    func appBansANodeThatFailsItsCheck(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let message = Self.signedMessage(mode)
        switch fixture.deployment {
        case .duo(let fixture):
            let stored = try #require(try fixture.store.share(keyId: keyshare.keyId))
            let nodeKeyshare = try Keyshare(algorithm: .ecdsa, mode: .duo,
                                            protocolBytes: try NodeShareBlob(bytes: stored.bytes).protocolBytes)
            let nodeKey = fixture.nodeKey
            let keyId = keyshare.keyId, clock = fixture.clock
            // The cheating node: validates the SETUP like a real one, then corrupts its R2.
            let cheatingNode = ScriptedNodeClient { connection in
                func send(_ frames: [Frame]) async throws(SilentShardError) {
                    do { try await connection.send(Data(Frame.bundle(frames))) } catch { throw .network(.connectionLost) }
                }
                func read() async throws(SilentShardError) -> SessionDriver.Incoming {
                    do { return SessionDriver.Incoming(bytes: [UInt8](try await connection.read()), link: [0]) } catch {
                        throw .network(.connectionLost)
                    }
                }
                do {
                    let first = try await read()
                    let now = clock.milliseconds
                    var window = try ReplayWindow()
                    let context = SetupValidationContext(token: .accepted, mode: .duo, algorithm: .ecdsa, operation: .sign,
                                                         params: keyId, nodeIndex: 1, cloudKey: nodeKey.verifyingKey.bytes,
                                                         groupID: nil, now: now)
                    let validated = try SetupValidator.validate(message: first.bytes, context: context, replay: &window)
                    let setup = validated.setup
                    guard let message = setup.payload.message else { return }
                    let keys = SessionKeyPair()
                    let machine = try DKLsSignRun(keyshare: try nodeKeyshare.dklsKeyshare(), signers: [0, 1], instanceID: setup.instanceID,
                                      setupHash: setup.setupHash, path: try DerivationPath("m"), messageHash: message)
                    var channel = try PartyFrameChannel(local: 1, setupFrame: setup.frame, setup: setup.payload, keys: keys,
                                                        trust: .init(cloudKey: nodeKey.verifyingKey, nowSeconds: now / 1000),
                                                        protocolTags: machine.receivableTags)
                    let accept = channel.acceptFrame(payload: AcceptPayload(setupHash: setup.setupHash,
                                                                            nodeKey: nodeKey.verifyingKey, certificate: nil,
                                                                            sessionKeys: keys.publicKeys, nodeTime: now,
                                                                            keyStatus: nil),
                                                     nodeKey: nodeKey)
                    try channel.ingestConsuming(frames: validated.rest, link: [0])
                    _ = try await runCorrupting(machine, channel: &channel, leadingFrames: [accept], corrupt: BanTests.cheat,
                                                send: send, read: read)
                } catch {}
                await connection.close(code: 1000, reason: "done")
            }
            let cheated = fixture.session(.ecdsa, signer: fixture.signer, storage: fixture.storage, client: cheatingNode)
            await #expect(throws: SilentShardError.abortProtocolAndBanParty(party: .node(1))) {
                _ = try await cheated.signature(keyshare: keyshare, message: message)
            }
        case .trio(let trio):
            let skewed = try Self.corrupted(keyshare, seedsAt: Self.peer1SenderCoPath, count: 256)
            await #expect(throws: SilentShardError.abortProtocolAndBanParty(party: .node(1))) {
                _ = try await trio.session.signature(keyshare: skewed, message: message, signer: .nodeA)
            }
        }
        let banId = KeyId.banPrefix + fixture.entryNodeKeyHex
        #expect(try await fixture.storage.read(keyId: banId)?.current?.kind == .sdkRecord)
        // Nodes never ban on another party's ABORT.
        let device = try DeviceKey(signer: fixture.signer)
        #expect(try !fixture.entryStore.isBanned(deviceKey: device.identity))

        switch fixture.deployment {
        case .duo(let duo):
            // The honest node, same app storage: refused locally, nothing sent.
            let sentBefore = duo.client.sentMessages.count
            await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
                _ = try await duo.session.signature(keyshare: keyshare, message: message)
            }
            await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
                _ = try await duo.session.keyRefresh(keyshare: keyshare)
            }
            #expect(duo.client.sentMessages.count == sentBefore)
        case .trio(let trio):
            // Signing with A is refused after A's ACCEPT, before any protocol message; the default picks B.
            let reportsBefore = trio.client.reports.count
            await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
                _ = try await trio.session.signature(keyshare: keyshare, message: message, signer: .nodeA)
            }
            let viaB = try await trio.session.signature(keyshare: keyshare, message: message)
            #expect(try verifyECDSA(viaB, hash: message, keyshare: keyshare))
            #expect(trio.client.reports.count == reportsBefore + 3)
            // Share changes need A: refused. Reconcile and export still work (export lets the user move funds).
            await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
                _ = try await trio.session.keyRefresh(keyshare: keyshare)
            }
        }
        // Reconcile still runs.
        #expect(try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId).generation == keyshare.generation)

        // Deleting the record lifts the ban.
        try await fixture.storage.delete(keyId: banId)
        let signature = try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
    }
}
