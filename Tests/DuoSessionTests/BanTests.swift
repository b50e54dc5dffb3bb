import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// session.md §9.4: a party whose own checks catch the other cheating (AbortAndBan: a failed consistency check in
/// signing) bans it. The node bans the device key; the app bans the node key. Reconcile keeps working;
/// only an operator (node) or a deliberate deletion of the record (app) lifts a ban.
@Suite("Duo bans after AbortAndBan", .serialized, .heavy, .timeLimit(.minutes(30)))
struct BanTests {
    static let message = [UInt8](repeating: 0x24, count: 32)
    /// DKLs23 signing R2 byte 300 lies inside ã: the receiver's multiplication check fails.
    static let cheat = flipping(tag: DKLsTag.signRound2Direct, offset: 300)

    /// A cheating app: a correct SETUP from the registered device, then a corrupted R2 (`corrupt`; the
    /// default flips a bit of ã). Returns the node's report and what the cheater saw. `beforeSend` runs
    /// before each of the app's protocol flights (0: R1, 1: R2) and may hold it.
    static func cheat(_ fixture: DuoFixture, keyshare: Keyshare,
                      corrupt: @escaping @Sendable (ProtocolMessage) -> ProtocolMessage = BanTests.cheat,
                      beforeSend: @escaping @Sendable (Int) async -> Void = { _ in }) async throws -> (NodeStepReport, SilentShardError?) {
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
        let machine = try DKLsSignRun(keyshare: try keyshare.dklsKeyshare(), signers: [0, 1],
                                      instanceID: instanceID, setupHash: setupHash,
                                      path: try DerivationPath("m"), messageHash: Self.message)
        var channel = try PartyFrameChannel(local: 0, setupFrame: setupFrame, setup: setup, keys: keys,
                                            trust: .init(cloudKey: cloudKey, nowSeconds: now / 1000),
                                            protocolTags: machine.receivableTags)
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: DuoAction.ECDSA.Signature(), params: keyshare.keyId)
        try await node.connect(action: DuoAction.ECDSA.Signature(), params: keyshare.keyId)
        let runner = fixture.runner
        let route = NodeStepRoute(algorithm: .ecdsa, operation: .sign, params: keyshare.keyId)
        let nodeTask = Task { await runner.run(connection: PipeNodeConnection(end: node), route: route) }
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


    @Test func nodeBansAnAppThatFailsItsMultiplicationCheck() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        let (report, cheaterSaw) = try await Self.cheat(fixture, keyshare: keyshare)
        #expect(cheaterSaw != nil)
        #expect(report == .failed(.abortProtocolAndBanParty(party: .app)))
        #expect(try fixture.store.isBanned(deviceKey: device.identity))

        // Every later session of the device is refused, except reconcile.
        let reconciled = try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation)
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Data(Self.message))
        }
        #expect(fixture.client.reports.last == .rejected(.banned))

        // The operator lifts the ban: signing works again.
        #expect(try fixture.store.liftBan(deviceKey: device.identity, operator: "test operator"))
        let signature = try await fixture.session.signature(keyshare: keyshare, message: Data(Self.message))
        #expect(try verifyECDSA(signature, hash: Data(Self.message), keyshare: keyshare))
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
        #expect(report == .failed(.abortProtocolAndBanParty(party: .app)))
        #expect(try fixture.store.isBanned(deviceKey: device.identity) == false)
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Data(Self.message))
        }
        #expect(fixture.client.reports.last == .rejected(.banned))
    }

    @Test func appBansANodeThatFailsItsMultiplicationCheck() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
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
                let machine = try DKLsSignRun(keyshare: try nodeKeyshare.dklsKeyshare(), signers: [0, 1],
                                              instanceID: setup.instanceID, setupHash: setup.setupHash,
                                              path: try DerivationPath("m"), messageHash: message)
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
        let cloudKeyHex = Hex.encode(nodeKey.verifyingKey.bytes)
        let cheated = fixture.session(.ecdsa, signer: fixture.signer, storage: fixture.storage, client: cheatingNode)
        await #expect(throws: SilentShardError.abortProtocolAndBanParty(party: .node(1))) {
            _ = try await cheated.signature(keyshare: keyshare, message: Data(Self.message))
        }
        let banId = KeyId.banPrefix + cloudKeyHex
        #expect(try await fixture.storage.read(keyId: banId)?.current?.kind == .sdkRecord)

        // The honest node, same app storage: refused locally, nothing sent.
        let sentBefore = fixture.client.sentMessages.count
        await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Data(Self.message))
        }
        await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
            _ = try await fixture.session.keyRefresh(keyshare: keyshare)
        }
        #expect(fixture.client.sentMessages.count == sentBefore)
        // Reconcile still runs.
        #expect(try await fixture.session.reconcileKeyshare(keyId: keyId).generation == keyshare.generation)

        // Deleting the record lifts the ban.
        try await fixture.storage.delete(keyId: banId)
        let signature = try await fixture.session.signature(keyshare: keyshare, message: Data(Self.message))
        #expect(try verifyECDSA(signature, hash: Data(Self.message), keyshare: keyshare))
    }
}
