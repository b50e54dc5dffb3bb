import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
import duo

/// Protocol v3 replaces v2, which replaced v1 (`docs/protocol/README.md`): a v1 or v2 app — its SETUP names keyshare
/// protocol version 1 or 2 —
/// gets a signed REJECT `UNSUPPORTED_VERSION` listing what the node speaks (`session.md` §4.3 step 2, §10, §11),
/// and its SDK reports `unsupportedVersion`, not an invalid parameter. (Version 3 being accepted is what every
/// other end-to-end suite exercises.)
@Suite("Protocol versions: a v1 or v2 peer is refused as a version", .timeLimit(.minutes(30)))
struct VersionRefusalTests {
    /// What the node answers a SETUP whose `protocol_version` is `version`.
    private static func answer(toProtocolVersion version: UInt8) async throws
        -> (frame: Frame, reject: RejectPayload?, appSaw: SilentShardError?, node: NodeStepReport, nodeKey: Ed25519.VerifyingKey) {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let device = try DeviceKey(signer: fixture.signer)
        let cloudKey = fixture.nodeKey.verifyingKey
        let keys = SessionKeyPair()
        let now = fixture.clock.milliseconds
        var setup = SetupPayload(mode: .duo, algorithm: .ecdsa, operation: .keygen, timestamp: now, deviceKey: device,
                                 sessionKeys: keys.publicKeys, cloudKey: cloudKey.bytes, participants: PartySet([0, 1]))
        setup.protocolVersion = version
        let setupFrame = try await setup.signedFrame(instanceID: .random(), signer: fixture.signer)
        var channel = try PartyFrameChannel(local: 0, setupFrame: setupFrame, setup: setup, keys: keys,
                                            trust: .init(cloudKey: cloudKey, nowSeconds: now / 1000), protocolTags: [])
        let (bytes, nodeReport) = try await Self.nodeAnswer(Frame.bundle([setupFrame]), fixture: fixture)
        let frames = try Frame.parseBundle(bytes)
        let frame = try #require(frames.first)
        let reject = frame.header.kind == .reject ? try RejectPayload(bytes: frame.body) : nil
        var appSaw: SilentShardError?
        do throws(SilentShardError) {
            _ = try await SessionDriver.awaitControl(.accept, channel: &channel, read: { () throws(SilentShardError) in
                SessionDriver.Incoming(bytes: bytes, link: [1])
            })
        } catch { appSaw = error }
        return (frame, reject, appSaw, nodeReport, cloudKey)
    }

    /// The node's first answer to `message` on a duo ECDSA keygen step, and how the step ended.
    private static func nodeAnswer(_ message: [UInt8], fixture: DuoFixture) async throws -> (bytes: [UInt8], report: NodeStepReport) {
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await node.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        let runner = fixture.runner
        let nodeTask = Task {
            await runner.run(connection: PipeConnection.duo(end: node), route: NodeStepRoute(algorithm: .ecdsa, operation: .keygen, params: nil))
        }
        try await app.send(bytes: Data(message))
        guard case .binary(let data) = try await app.readMessage() else { throw SilentShardError.network(.connectionLost) }
        return ([UInt8](data), await nodeTask.value)
    }

    /// Security review 2, finding 12: a SETUP of a session version the node does not speak cannot be parsed, so its
    /// REJECT has no setup_hash; the node echoes the instance_id from the header's frozen offset, and the app counts
    /// the signed UNSUPPORTED_VERSION as authenticated only because of that echo.
    @Test func finding12_unknownSessionVersionRejectEchoesTheInstanceID() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let device = try DeviceKey(signer: fixture.signer)
        let cloudKey = fixture.nodeKey.verifyingKey
        let keys = SessionKeyPair()
        let setup = SetupPayload(mode: .duo, algorithm: .ecdsa, operation: .keygen, timestamp: fixture.clock.milliseconds,
                                 deviceKey: device, sessionKeys: keys.publicKeys, cloudKey: cloudKey.bytes,
                                 participants: PartySet([0, 1]))
        let instanceID = InstanceID.random()
        var bytes = try await setup.signedFrame(instanceID: instanceID, signer: fixture.signer).encoded()
        bytes[0] = 0x7F   // a future session version
        let (answer, _) = try await Self.nodeAnswer(bytes, fixture: fixture)
        let frame = try #require(try Frame.parseBundle(answer).first)
        let reject = try RejectPayload(bytes: frame.body)
        #expect(reject.code == .unsupportedVersion)
        #expect(reject.setupHash == .unbound)
        #expect(frame.header.instanceID == instanceID)
        let seen = reject.sessionError(frame: frame, trustedNodeKey: cloudKey, expectedSetupHash: SetupHash(checked: SecureRandom.bytes(count: 32)),
                                       expectedInstanceID: instanceID)
        #expect(seen == SessionError.reported(.unsupportedVersion, by: 1, blamed: nil, authenticated: true))
    }

    @Test(arguments: [UInt8(1), 2, 0, 4, 255])
    func anotherProtocolVersionIsRefusedSignedWithTheVersionsTheNodeSpeaks(version: UInt8) async throws {
        let answer = try await Self.answer(toProtocolVersion: version)
        #expect(answer.frame.header.kind == .reject)
        let reject = try #require(answer.reject)
        #expect(reject.code == .unsupportedVersion)
        #expect(answer.frame.hasValidSignature(by: answer.nodeKey))
        let versions = try #require(reject.supportedVersionsDetail)
        #expect(versions.session == [1])
        #expect(versions.protocol == [3])
        #expect(!versions.protocol.contains(version))
        // The app's SDK: an authenticated version refusal, reported as such.
        #expect(answer.appSaw == .unsupportedVersion)
        #expect(answer.node == .rejected(.unsupportedVersion))
    }
}
