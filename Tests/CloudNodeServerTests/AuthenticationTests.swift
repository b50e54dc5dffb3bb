import CloudNode
import duo
import Foundation
import MPCCrypto
import SilentShardCore
import Testing
import trio

/// HS256 JWTs for the tests.
enum TestJWT {
    static let secret = [UInt8](repeating: 0x5a, count: 32)

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func make(alg: String = "HS256", exp: Double = Date().timeIntervalSince1970 + 600, sub: String = "alice",
                     secret: [UInt8] = TestJWT.secret) -> String {
        let header = base64url(Array(#"{"alg":"\#(alg)","typ":"JWT"}"#.utf8))
        let payload = base64url(Array(#"{"sub":"\#(sub)","exp":\#(Int(exp))}"#.utf8))
        let input = header + "." + payload
        let mac = alg == "none" ? [] : SHA256.hmac(key: secret, data: Array(input.utf8))
        return input + "." + base64url(mac)
    }
}

/// A hook service: a second node whose POST handler accepts the body "good-hook-token".
struct HookService: PostHandler {
    func handle(_ request: PostRequest) async throws -> PostResponse {
        request.body == Data("good-hook-token".utf8) ? PostResponse(body: Data("hook-user".utf8)) : PostResponse(status: 403, body: Data())
    }

    static func start() throws -> NodeServer {
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: Ed25519.SigningKey(), verifier: NoTokenVerifier(), postHandler: HookService(), logger: .silent))
        try server.start()
        return server
    }
}

/// One verifier built-in with a valid and an invalid token.
enum VerifierKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case tokenFile, jwt, hook

    var testDescription: String { rawValue }
}

@Suite(.timeLimit(.minutes(30))) struct AuthenticationTests {
    /// (verifier, valid token, invalid tokens, hook server to stop).
    func setUp(_ kind: VerifierKind) throws -> (any TokenVerifier, String, [String], NodeServer?) {
        switch kind {
        case .tokenFile:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("node-token-\(UUID().uuidString)").path
            try "file-token-123\n".write(toFile: path, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: path) }
            return (try StaticTokenVerifier(contentsOf: path), "file-token-123", ["file-token-124", "file-token-12", ""], nil)
        case .jwt:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("node-jwt-\(UUID().uuidString)").path
            try Data(TestJWT.secret).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            return (try JWTHS256Verifier(secretFile: path), TestJWT.make(), [
                TestJWT.make(exp: Date().timeIntervalSince1970 - 10),                 // expired
                TestJWT.make(alg: "none"),                                             // alg none
                TestJWT.make(alg: "HS512"),                                            // wrong alg (HS256 MAC)
                TestJWT.make(secret: [UInt8](repeating: 1, count: 32)),                 // wrong key
                "not.a.jwt", "garbage",
            ], nil)
        case .hook:
            let hook = try HookService.start()
            return (try HookTokenVerifier(url: "http://127.0.0.1:\(hook.port)/v3/ecdsa/export"), "good-hook-token",
                    ["bad-hook-token"], hook)
        }
    }

    @Test(arguments: VerifierKind.allCases)
    func validInvalidMissingTimeout(kind: VerifierKind) async throws {
        let (verifier, valid, invalid, hook) = try setUp(kind)
        let node = try TestNode.start(verifier: verifier, tokenTimeout: .milliseconds(300))

        // Valid: the handler runs.
        let good = DuoNetworkClient(websocketConfig: node.clientConfig(token: valid))
        try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await good.send(bytes: Data([7]))
        #expect(try await good.read() == Data([7]))
        try await good.disconnect()

        // Invalid: closed with 4401, no handler.
        for token in invalid {
            let bad = TrioNetworkClient(websocketConfig: node.clientConfig(token: token))
            try await bad.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
            let error = await thrownError {
                try? await bad.send(bytes: Data([7]))
                _ = try await bad.read()
            }
            #expect(closeCode(error) == Int(NodeCloseCode.unauthorized.rawValue), "\(kind) token #\(invalid.firstIndex(of: token) ?? -1)")
            try await bad.disconnect()
        }

        // Missing (binary first message): 4401.
        let missing = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await missing.connect(action: DuoAction.EdDSA.Signature(), params: nil)
        let missingError = await thrownError {
            try await missing.send(bytes: Data([7]))
            _ = try await missing.read()
        }
        #expect(closeCode(missingError) == Int(NodeCloseCode.unauthorized.rawValue))
        try await missing.disconnect()

        // Nothing at all: 4408 after the token timeout.
        let silent = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await silent.connect(action: DuoAction.EdDSA.Signature(), params: nil)
        #expect(closeCode(await thrownError { _ = try await silent.read() }) == Int(NodeCloseCode.authenticationTimeout.rawValue))
        try await silent.disconnect()

        let metrics = node.server.metricsText()
        #expect(metrics.contains("silentshard_node_auth_failures_total \(invalid.count + 2)"))
        #expect(metrics.contains(#"silentshard_node_steps_total{route="duo/ecdsa/keygen"} 1"#))
        #expect(!metrics.contains("trio/trio/ecdsa/keygen"), "no handler ran for a refused token")
        for secret in [valid] + invalid where secret.count > 4 {
            #expect(!node.log.all.contains { $0.contains(secret) }, "token in the log")
        }
        await node.server.stop()
        await hook?.stop()
    }

    @Test func jwtVerifierUnitCases() async throws {
        let verifier = try JWTHS256Verifier(secret: TestJWT.secret)
        #expect(try await verifier.verify(token: TestJWT.make(sub: "bob")) == Principal(subject: "bob"))
        await #expect(throws: AuthenticationError.expired) { try await verifier.verify(token: TestJWT.make(exp: 1000)) }
        await #expect(throws: AuthenticationError.unsupportedAlgorithm) { try await verifier.verify(token: TestJWT.make(alg: "none")) }
        await #expect(throws: AuthenticationError.unsupportedAlgorithm) { try await verifier.verify(token: TestJWT.make(alg: "RS256")) }
        await #expect(throws: AuthenticationError.missingToken) { try await verifier.verify(token: nil) }
        await #expect(throws: AuthenticationError.invalidToken) {
            try await verifier.verify(token: TestJWT.make(secret: [UInt8](repeating: 2, count: 32)))
        }
        // A payload without exp is refused.
        let header = TestJWT.base64url(Array(#"{"alg":"HS256"}"#.utf8))
        let payload = TestJWT.base64url(Array(#"{"sub":"x"}"#.utf8))
        let noExp = header + "." + payload + "." + TestJWT.base64url(SHA256.hmac(key: TestJWT.secret, data: Array("\(header).\(payload)".utf8)))
        await #expect(throws: AuthenticationError.invalidToken) { try await verifier.verify(token: noExp) }
        #expect(throws: NodeServerError.self) { try JWTHS256Verifier(secret: [1, 2, 3]) }
        #expect(!String(describing: verifier).contains("5a5a"))
    }

    @Test func hookUnreachableRefuses() async throws {
        // A port nothing listens on (a server started and stopped).
        let hook = try HookService.start()
        let port = hook.port
        await hook.stop()
        let verifier = try HookTokenVerifier(url: "http://127.0.0.1:\(port)/v3/ecdsa/export", timeout: .seconds(5))
        await #expect(throws: AuthenticationError.hookUnavailable) { try await verifier.verify(token: "x") }
        #expect(throws: NodeServerError.self) { try HookTokenVerifier(url: "ftp://example.com/") }
    }

    @Test func noneAcceptsAnyToken() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig(token: "whatever"))
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1]))
        #expect(try await client.read() == Data([1]))
        try await client.disconnect()
        await node.server.stop()
    }
}
