import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
import duo

/// Security review finding 3: a token carrying CR/LF was written verbatim into the hook verifier's
/// `Authorization: Bearer …` line, so a client without any valid token could add headers to (or smuggle
/// a second request into) the operator's hook call. Now only RFC 6750 b64tokens reach a verifier, and the
/// SDK's POST client never writes another into a header.
@Suite("Finding 3: CR/LF in a token never reaches a hook's request head", .timeLimit(.minutes(30)))
struct TokenInjectionTests {
    static let injected = "t\r\nX-Auth-Request-User: victim"
    static let smuggled = "t\r\n\r\nPOST /admin HTTP/1.1\r\nHost: hook\r\n\r\n"

    @Test func injectedTokenIsRefusedBeforeTheHookIsCalled() async throws {
        let hook = try RecordingHTTPServer(answer: "victim")
        defer { hook.stop() }
        let verifier = try HookTokenVerifier(url: "http://127.0.0.1:\(hook.port)/verify")
        let node = try TestNode.start(verifier: verifier)
        for token in [Self.injected, Self.smuggled, "t\u{0}x", "two words", "caf\u{E9}"] {
            let client = DuoNetworkClient(websocketConfig: node.clientConfig(token: token))
            try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
            let error = await thrownError {
                try? await client.send(bytes: Data([7]))
                _ = try await client.read()
            }
            #expect(closeCode(error) == Int(NodeCloseCode.unauthorized.rawValue))
            try? await client.disconnect()
        }
        #expect(hook.receivedHeads.isEmpty)

        // A well-formed token still goes to the hook, with exactly one Authorization line.
        let good = DuoNetworkClient(websocketConfig: node.clientConfig(token: "good-token_1.2~3+4/5=="))
        try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await good.send(bytes: Data([7]))
        #expect(try await good.read() == Data([7]))
        try await good.disconnect()
        let heads = hook.receivedHeads
        #expect(heads.count == 1)
        #expect(heads.first?.components(separatedBy: "\r\n").filter { $0.hasPrefix("Authorization:") }
                == ["Authorization: Bearer good-token_1.2~3+4/5=="])
        await node.server.stop()
    }

    /// The hook verifier itself refuses such a token without calling out (node B verifies the token A
    /// forwards in LINK_OPEN with its own verifier, so a malformed one never leaves B either).
    @Test func hookVerifierRefusesWithoutCallingOut() async throws {
        let hook = try RecordingHTTPServer()
        defer { hook.stop() }
        let verifier = try HookTokenVerifier(url: "http://127.0.0.1:\(hook.port)/verify")
        for token in [Self.injected, Self.smuggled, "t\u{0}x"] {
            await #expect(throws: AuthenticationError.invalidToken) { _ = try await verifier.verify(token: token) }
        }
        #expect(hook.receivedHeads.isEmpty)
        #expect(try await verifier.verify(token: "fine").subject == "hook-user")
    }

    /// The SDK's POST (preSignFinal, the backend's export) refuses such a token before connecting.
    @Test func postClientNeverWritesAMalformedToken() async throws {
        let server = try RecordingHTTPServer()
        defer { server.stop() }
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/v3/ecdsa/export"))
        let settings = WebSocketSettings(WebsocketConfig(url: "ws://127.0.0.1"))
        for token in [Self.injected, Self.smuggled, "t\u{0}", ""] {
            await #expect(throws: NetworkError.invalidHandshake(reason: "header Authorization not allowed")) {
                _ = try await WebSocketTransport.post(url: url, body: Data([1]), bearerToken: token, settings: settings)
            }
        }
        #expect(server.receivedHeads.isEmpty)
        #expect(try await WebSocketTransport.post(url: url, body: Data([1]), bearerToken: "abc.DEF-_", settings: settings)
                == Data("hook-user".utf8))
    }

    @Test func b64tokenSyntax() {
        for good in ["a", "A.b-c_d~e+f/g", "abc==", "eyJhbGciOi.eyJzdWIi.c2ln"] { #expect(BearerToken.isWellFormed(good), "\(good)") }
        for bad in ["", "=", "a=b", "a b", "a\r\nb", "a\u{0}", "a\"", "a,b", "é", String(repeating: "a", count: 8193)] {
            #expect(!BearerToken.isWellFormed(bad), "\(bad.debugDescription)")
        }
        #expect(BearerToken.isWellFormed(String(repeating: "a", count: 8192)))
    }
}
