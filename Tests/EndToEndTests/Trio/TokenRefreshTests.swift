import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// `WebsocketConfig.tokenProvider` against real nodes whose JWT verifier reads a manual clock: a token
/// that expires between steps (or between a presignature and its finish) is replaced once, through
/// `.afterRefusal`, and the refused step or POST retried; a provider that cannot help ends the step
/// with a typed error after exactly one retry.
@Suite("Token refresh: an expired token is replaced once and the step retried", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TokenRefreshTests {
    /// A provider that caches one token and mints a new one only when asked after a refusal (or when
    /// `mintsValidTokens` is false, keeps answering the stale one); it records what it was asked.
    actor CachingProvider {
        let clock: ManualClock
        var mintsValidTokens = true
        var cached: String
        private(set) var requests: [TokenRequest] = []

        init(clock: ManualClock) {
            self.clock = clock
            cached = TokenRefreshTests.jwt(clock: clock)
        }

        func token(_ request: TokenRequest) -> String {
            requests.append(request)
            if request == .afterRefusal, mintsValidTokens { cached = TokenRefreshTests.jwt(clock: clock) }
            return cached
        }

        func forget() { requests = [] }
        func stopMinting() { mintsValidTokens = false }
    }

    struct ProviderFailure: Error {}

    static let secret = [UInt8](repeating: 0x3C, count: 32)

    /// An HS256 JWT for subject "alice", valid for 600 s from `clock`'s now.
    static func jwt(clock: ManualClock) -> String {
        func base64url(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let header = base64url(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64url(Array(#"{"sub":"alice","exp":\#(Int(clock.seconds) + 600)}"#.utf8))
        let input = header + "." + payload
        return input + "." + base64url(SHA256.hmac(key: secret, data: Array(input.utf8)))
    }

    /// One device for every session of a test (the nodes bind a key to the device that made it).
    static let device = SoftwareEd25519MessageSigner()

    static func session(_ cluster: TrioCluster, provider: @escaping TokenProvider) -> TrioSession {
        SilentShard.ECDSA.trioInitiator(messageSigner: device, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                        websocketConfig: WebsocketConfig(url: cluster.url, tokenProvider: provider),
                                        storageClient: InMemoryStorageClient())
    }

    /// Nodes A and B whose HS256 JWT verifiers read `clock`.
    static func cluster(clock: ManualClock) throws -> TrioCluster {
        try TrioCluster.start(token: "unused", verifier: JWTHS256Verifier(secret: secret, now: clock.date))
    }

    @Test func anExpiredTokenIsReplacedForAStepAndForAPresignatureFinish() async throws {
        let clock = ManualClock()
        let cluster = try Self.cluster(clock: clock)
        defer { Task { await cluster.stop() } }
        let provider = CachingProvider(clock: clock)
        let session = Self.session(cluster, provider: { await provider.token($0) })
        let keyshare = try await session.keygen()
        #expect(await provider.requests == [.beforeStep])

        // The token expires between the presignature and its finish: the POST gets 401 and is retried once.
        let presignature = try await session.preSignature(keyshare: keyshare)
        await provider.forget()
        clock.advance(seconds: 700)
        let hash = EndToEnd.message(.ecdsa, "after the token expired")
        let signature = try await session.preSignatureFinal(preSignature: presignature, message: hash)
        #expect(try EndToEnd.verifies(signature, message: hash, keyshare: keyshare))
        #expect(await provider.requests == [.beforeStep, .afterRefusal])

        // It expires again before a WebSocket step: REJECT(AUTH_INVALID), then one retry with a new token.
        await provider.forget()
        clock.advance(seconds: 700)
        let again = try await session.signature(keyshare: keyshare, message: hash)
        #expect(try EndToEnd.verifies(again, message: hash, keyshare: keyshare))
        #expect(await provider.requests == [.beforeStep, .afterRefusal])
        // A valid token is not refreshed.
        await provider.forget()
        _ = try await session.signature(keyshare: keyshare, message: hash)
        #expect(await provider.requests == [.beforeStep])
    }

    @Test func aProviderThatCannotHelpEndsTheStepAfterOneRetry() async throws {
        let clock = ManualClock()
        let cluster = try Self.cluster(clock: clock)
        defer { Task { await cluster.stop() } }
        let provider = CachingProvider(clock: clock)
        let session = Self.session(cluster, provider: { await provider.token($0) })
        let keyshare = try await session.keygen()
        await provider.stopMinting()
        await provider.forget()
        clock.advance(seconds: 700)
        let hash = EndToEnd.message(.ecdsa, "stale token")
        await #expect(throws: SilentShardError.authenticationFailed(reason: "token refused")) {
            _ = try await session.signature(keyshare: keyshare, message: hash, signer: .nodeA)
        }
        #expect(await provider.requests == [.beforeStep, .afterRefusal])

        // A provider that throws: a typed transport error naming the error's type only, nothing sent.
        let failing = Self.session(cluster, provider: { _ in throw ProviderFailure() })
        await #expect(throws: SilentShardError.network(.tokenUnavailable(reason: "ProviderFailure"))) {
            _ = try await failing.signature(keyshare: keyshare, message: hash, signer: .nodeA)
        }
        // The node kept serving: a valid token works.
        let valid = CachingProvider(clock: clock)
        let signature = try await Self.session(cluster, provider: { await valid.token($0) })
            .signature(keyshare: keyshare, message: hash, signer: .nodeA)
        #expect(try EndToEnd.verifies(signature, message: hash, keyshare: keyshare))
        #expect(await valid.requests == [.beforeStep])
    }
}
