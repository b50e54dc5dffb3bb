@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// A trio client that says, through node A's trusted proxy (`X-Forwarded-For`), which address it comes from.
private final class ForwardedTrioClient: NetworkClient, @unchecked Sendable {
    let config: WebsocketConfig
    let address: String
    let engine: WebSocketClientEngine

    init(config: WebsocketConfig, address: String) {
        self.config = config
        self.address = address
        engine = WebSocketClientEngine(config: config)
    }

    func connect(action: NetworkAction, params: String?) async throws {
        let segments = action.algorithm == "eddsa" ? [action.path, "eddsa", action.action] : [action.path, action.action]
        let url = try NetworkRoute.url(base: config.url, segments: segments, params: params, websocket: true)
        try await engine.connect(url: url, subprotocol: action.protocol, headers: ["X-Forwarded-For": address])
    }

    func send(bytes: Data) async throws { try await engine.send(.binary(bytes)) }
    func send(text: String) async throws { try await engine.send(.text(text)) }
    func read() async throws -> Data { try await engine.read() }
    func disconnect() async throws { await engine.disconnect() }
}

/// Second review finding 5: node B counted key creations per shared subject (`token-file`, `--auth none`,
/// a hook's fallback), so one client spent B's hourly budget for every client: A knew the client's
/// address but sent LINK_OPEN with `client_address` empty. A now fills it (under its signature), and
/// B counts a shared subject per the address a certified A forwarded.
@Suite("Finding 5: node B counts a shared subject per client address (forwarded by A)", .serialized, .heavy,
       .timeLimit(.minutes(10)))
struct TrioForwardedAddressTests {
    @Test func finding5_oneClientCannotSpendNodeBsBudgetForEveryone() async throws {
        let clusterKey = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
        let identityA = try TrioCluster.identity(.trioA, group: group, clusterKey: clusterKey)
        let identityB = try TrioCluster.identity(.trioB, group: group, clusterKey: clusterKey)
        // B: one key creation per principal per hour, on a clock that stands still.
        let limiterB = NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 1), clock: ManualClock().read)
        let runnerB = NodeStepRunner(identity: identityB, store: try TrioCluster.store(), peer: nil,
                                     replayWindow: try ReplayWindow(), tokenVerifier: try StaticTokenVerifier(token: "shared"),
                                     rateLimiter: limiterB)
        var configB = NodeServerConfiguration(nodeKey: identityB.nodeKey, verifier: NoTokenVerifier(),
                                              stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runnerB)),
                                              logger: .silent, rateLimiter: limiterB)
        configB.trio = (identityB.certificate, identityB.clusterKey)
        configB.peerListener = PeerListener()
        let serverB = NodeServer(configuration: configB)
        _ = try serverB.start()
        // A: behind a trusted proxy (loopback), no key-creation limit of its own.
        let limiterA = NodeRateLimiter(limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 0, trustedProxies: ["127.0.0.1"]))
        let runnerA = NodeStepRunner(identity: identityA, store: try TrioCluster.store(),
                                     peer: WebSocketPeerConnector(baseURL: "ws://127.0.0.1:\(serverB.peerPort ?? 0)"),
                                     replayWindow: try ReplayWindow(), rateLimiter: limiterA)
        var configA = NodeServerConfiguration(nodeKey: identityA.nodeKey, verifier: try StaticTokenVerifier(token: "shared"),
                                              stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runnerA)),
                                              logger: .silent, rateLimiter: limiterA)
        configA.trio = (identityA.certificate, identityA.clusterKey)
        let serverA = NodeServer(configuration: configA)
        _ = try serverA.start()

        func session(from address: String) -> TrioSession {
            let config = WebsocketConfig(url: "ws://127.0.0.1:\(serverA.port)", authenticationToken: "shared")
            return TrioSession(algorithm: .eddsa, messageSigner: SoftwareEd25519MessageSigner(),
                               cloudVerifyingKey: Hex.encode(clusterKey.verifyingKey.bytes), storageClient: InMemoryStorageClient(),
                               networkClient: ForwardedTrioClient(config: config, address: address),
                               actionProvider: TrioEdDSANetworkActions())
        }
        // The first client spends its budget at B.
        _ = try await session(from: "198.51.100.7").keygen()
        await #expect(throws: SilentShardError.rateLimited(retryAfter: 3_600)) {
            _ = try await session(from: "198.51.100.7").keygen()
        }
        // Another client at another address, with the same shared token: still served by B.
        let keyshare = try await session(from: "203.0.113.20").keygen()
        #expect(keyshare.mode == .trio)
        await serverA.stop()
        await serverB.stop()
    }

    @Test("LINK_OPEN's client address is under A's signature; B believes it only from a certified A")
    func linkOpenClientAddressIsSigned() throws {
        let clusterKey = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
        let identityA = try TrioCluster.identity(.trioA, group: group, clusterKey: clusterKey)
        let identityB = try TrioCluster.identity(.trioB, group: group, clusterKey: clusterKey)
        let now = WallClock.milliseconds()
        func frame(_ identity: TrioNodeIdentity, address: String) -> [UInt8] {
            let payload = LinkOpenPayload(certificate: identity.certificate, purpose: .session, mode: .trio, algorithm: .eddsa,
                                          operation: .keygen, token: Array("shared".utf8), timestamp: now,
                                          clientAddress: TrioLink.linkAddress(address)).encoded()
            let header = FrameHeader(kind: .linkOpen, sender: identity.index, receiver: identity.peerIndex,
                                     length: UInt32(payload.count), instanceID: InstanceID.random())
            return Frame.signed(header: header, payload: payload, key: identity.nodeKey).encoded()
        }
        let good = frame(identityA, address: "198.51.100.7")
        let opened = try TrioLink.accept(good, identity: identityB, replay: try ReplayWindow(), now: now)
        #expect(opened.payload.clientAddress == Array("198.51.100.7".utf8))
        // The same frame with another address (same length, A's signature kept) is refused.
        let original = Array("198.51.100.7".utf8), forged = Array("203.0.113.99".utf8)
        var tampered = good
        let at = try #require((0...(good.count - original.count)).first { Array(good[$0..<($0 + original.count)]) == original })
        tampered.replaceSubrange(at..<(at + forged.count), with: forged)
        #expect(throws: SilentShardError.self) {
            _ = try TrioLink.accept(tampered, identity: identityB, replay: try ReplayWindow(), now: now)
        }
        // Only what was accepted from a certified A moves a shared subject onto an address.
        let shared = Principal(subject: "token-file", identifiesSubject: false)
        #expect(NodeStepRunner.counted(shared, forwardedAddress: opened.payload.clientAddress, limits: .standard)?.rateLimitKey
            == "address 198.51.100.7")
        #expect(NodeStepRunner.counted(shared, forwardedAddress: Array("2001:db8:1:2::9".utf8), limits: .standard)?.rateLimitKey
            == "address 2001:db8:1:2::/64")
        #expect(NodeStepRunner.counted(shared, forwardedAddress: nil, limits: .standard)?.rateLimitKey == "token-file")
        let alice = Principal(subject: "alice")
        #expect(NodeStepRunner.counted(alice, forwardedAddress: opened.payload.clientAddress, limits: .standard)?.rateLimitKey == "alice")
        // Text that is not an address is no LINK_OPEN field.
        #expect(TrioLink.linkAddress(String(repeating: "a", count: 65)) == nil && TrioLink.linkAddress("") == nil)
    }
}
