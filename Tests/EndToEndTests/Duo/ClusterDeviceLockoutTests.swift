import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// Signs with a key the node does not expect: claims `claimed`'s public key, signs with random bytes.
private struct BadSigner: MessageSigner {
    let claimed: SoftwareEd25519MessageSigner
    var keyType: MessageSignerKeyType { .ed25519 }
    var verifyingKey: Data { claimed.verifyingKey }
    func sign(_ message: Data) async throws -> Data { Data(SecureRandom.bytes(count: 64)) }
}

/// Proposal P5 (`docs/protocol/session.md` §9.5) through the wire: two duo node servers of one cluster (one node
/// key, one SQLite database, a store instance and a limiter each, as two processes have) and two principals
/// with tokens of their own. Failed device signatures count per (principal, device key) across the cluster.
@Suite("P5: failed device signatures count per (principal, device key) across a cluster's processes", .heavy, .timeLimit(.minutes(30)))
struct ClusterDeviceLockoutTests {
    struct TwoPrincipals: TokenVerifier {
        var name: String { "two principals" }
        func verify(token: String?) async throws(AuthenticationError) -> Principal {
            switch token {
            case "token-x"?: return Principal(subject: "X")
            case "token-y"?: return Principal(subject: "Y")
            default: throw .invalidToken
            }
        }
    }

    @Test func attackerCannotLockOutAnotherPrincipalsDeviceButLocksItselfOutClusterWide() async throws {
        // The limiters' clocks stand still, so the minute never passes while the machine works.
        let clock = ManualClock()
        let limits = NodeRateLimits(failedDeviceSignaturesPerMinute: 5)
        let nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-cluster-lockout-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let masterKey = NodeMasterKey.random()
        var servers: [NodeServer] = []
        var ports: [Int] = []
        for _ in 0..<2 {
            let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: masterKey)
            let limiter = NodeRateLimiter(limits: limits, clock: clock.read, cluster: ClusterRateLimits(store: store, clock: clock.read))
            let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow(), rateLimiter: limiter)
            let server = NodeServer(configuration: NodeServerConfiguration(
                nodeKey: nodeKey, verifier: TwoPrincipals(),
                stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)), logger: .silent, rateLimiter: limiter))
            ports.append(try server.start())
            servers.append(server)
        }
        let cloudKey = Hex.encode(nodeKey.verifyingKey.bytes)
        func session(_ signer: any MessageSigner, token: String, process: Int) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(
                messageSigner: signer, cloudVerifyingKey: cloudKey,
                websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(ports[process])", authenticationToken: token),
                storageClient: InMemoryStorageClient())
        }
        let victim = SoftwareEd25519MessageSigner()
        let attackerDevice = SoftwareEd25519MessageSigner()

        // X sends SETUPs with Y's device key and bad signatures, alternating between the two processes; past the
        // limit, X's next one is refused before its signature is checked (security review 2, finding 7).
        for index in 0..<5 {
            await #expect(throws: SilentShardError.authenticationFailed(reason: "device signature")) {
                _ = try await session(BadSigner(claimed: victim), token: "token-x", process: index % 2).keygen()
            }
        }
        await #expect(throws: SilentShardError.rateLimited(retryAfter: 60)) {
            _ = try await session(BadSigner(claimed: victim), token: "token-x", process: 1).keygen()
        }
        // Y, the device's owner, is served by both processes; its key signs (the signature verified).
        let keyshare = try await session(victim, token: "token-y", process: 0).keygen()
        let hash = Data(SHA256.hash(Array("P5".utf8)))
        let signature = try await session(victim, token: "token-y", process: 1).signature(keyshare: keyshare, message: hash)
        #expect(signature.isValid(for: hash, publicKey: keyshare.publicKey))

        // X's failures with its own device key: 4 in total (2 per process) still leave it served...
        for index in 0..<4 {
            await #expect(throws: SilentShardError.authenticationFailed(reason: "device signature")) {
                _ = try await session(BadSigner(claimed: attackerDevice), token: "token-x", process: index % 2).keygen()
            }
        }
        let own = try await session(attackerDevice, token: "token-x", process: 1).keygen()
        #expect(own.mode == .duo)
        // ...the 5th in total (the 3rd at process 0) limits X's device in both processes, process 1 included,
        // which has counted only 2 itself.
        await #expect(throws: SilentShardError.authenticationFailed(reason: "device signature")) {
            _ = try await session(BadSigner(claimed: attackerDevice), token: "token-x", process: 0).keygen()
        }
        for process in 0..<2 {
            await #expect(throws: SilentShardError.rateLimited(retryAfter: 60)) {
                _ = try await session(attackerDevice, token: "token-x", process: process).keygen()
            }
        }
        for server in servers { await server.stop() }
    }
}
