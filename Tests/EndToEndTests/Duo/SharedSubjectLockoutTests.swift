import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// A signer that claims another device's public key but cannot sign for it (an attacker who knows a
/// victim's device key, as anyone who saw one of its SETUPs does).
private struct ImpostorSigner: MessageSigner {
    let victim: SoftwareEd25519MessageSigner
    var keyType: MessageSignerKeyType { .ed25519 }
    var verifyingKey: Data { victim.verifyingKey }
    func sign(_ message: Data) async throws -> Data { Data(SecureRandom.bytes(count: 64)) }
}

/// A client that says, through the trusted proxy's `X-Forwarded-For`, which address it comes from.
private final class ForwardedClient: DuoNetworkClient, @unchecked Sendable {
    var address = "10.0.0.1"
    override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        try await super.connect(websocketAction: websocketAction, params: params, headers: ["X-Forwarded-For": address])
    }
}

/// Security review finding 10 (second half): failed device signatures were counted per (subject, device
/// key). Where the verifier gives every client the same subject (`token-file`, `--auth none`, a hook's
/// fallback), anyone could send five SETUPs with a victim's device key and bad signatures and lock the
/// victim out for a minute from anywhere. Such principals are now counted per (client address, device).
@Suite("Finding 10: a shared subject cannot be used to lock another client's device out", .heavy, .timeLimit(.minutes(30)))
struct SharedSubjectLockoutTests {
    @Test func failuresFromOneAddressDoNotLockTheDeviceOutElsewhere() async throws {
        let limits = NodeRateLimits(failedDeviceSignaturesPerMinute: 3, trustedProxies: ["127.0.0.1"])
        // A clock that stands still: the retry-after the limiter computes does not depend on how long the
        // machine takes between the failures and the check.
        let limiter = NodeRateLimiter(limits: limits, clock: ManualClock().read)
        let nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-lockout-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
        let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow(), rateLimiter: limiter)
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: nodeKey, verifier: try StaticTokenVerifier(token: "shared"),
            stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)), logger: .silent, rateLimiter: limiter))
        let port = try server.start()
        let cloudKey = Hex.encode(nodeKey.verifyingKey.bytes)
        let victim = SoftwareEd25519MessageSigner()
        func session(_ signer: any MessageSigner, from address: String) -> DuoSession {
            let client = ForwardedClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)", authenticationToken: "shared"))
            client.address = address
            return SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                                  storageClient: InMemoryStorageClient())
        }
        // The attacker, at 10.0.0.66, with the victim's public key and bad signatures: refused each time
        // (past the limit the node refuses that device's SETUPs from this address before checking them).
        let attacker = session(ImpostorSigner(victim: victim), from: "10.0.0.66")
        for _ in 0..<5 {
            await #expect(throws: SilentShardError.self) { _ = try await attacker.keygen() }
        }
        // The victim itself, from the attacker's address, is limited there too (the count is per address).
        await #expect(throws: SilentShardError.rateLimited(retryAfter: 60)) {
            _ = try await session(victim, from: "10.0.0.66").keygen()
        }
        // The victim, elsewhere, with the same shared token: still served.
        let keyshare = try await session(victim, from: "10.0.0.7").keygen()
        #expect(keyshare.mode == .duo)
        await server.stop()
    }
}
