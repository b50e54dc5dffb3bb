import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing

/// Security review finding 11: the principal's subject is the key owner's name, so it must identify one
/// principal. A JWT without `sub` was accepted as the shared subject "jwt" (every such token owned every
/// other's keys), and subjects were cut to 128 bytes (two subjects sharing a prefix became one owner).
@Suite("Finding 11: a token's subject is whole and present", .timeLimit(.minutes(30)))
struct PrincipalIdentityTests {
    static let secret = [UInt8](repeating: 0x61, count: 32)

    static func jwt(_ claims: String) -> String {
        let header = TestJWT.base64url(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = TestJWT.base64url(Array(#"{"exp":\#(Int(Date().timeIntervalSince1970) + 600)\#(claims)}"#.utf8))
        let input = header + "." + payload
        return input + "." + TestJWT.base64url(SHA256.hmac(key: secret, data: Array(input.utf8)))
    }

    @Test func jwtSubjectIsRequiredAndNeverCut() async throws {
        let verifier = try JWTHS256Verifier(secret: Self.secret)
        let long = String(repeating: "a", count: 128)
        for claims in ["", #","sub":"""#, #","sub":7"#, #","sub":"\#(long)x""#, #","sub":"\#(long)y""#] {
            await #expect(throws: AuthenticationError.invalidToken, "\(claims.prefix(20))") {
                _ = try await verifier.verify(token: Self.jwt(claims))
            }
        }
        #expect(try await verifier.verify(token: Self.jwt(#","sub":"\#(long)""#)).subject == long)
    }

    @Test func jwtIssuerAndAudienceWhenConfigured() async throws {
        let verifier = try JWTHS256Verifier(secret: Self.secret, issuer: "https://auth.example", audience: "silentshard")
        for claims in [#","sub":"a""#, #","sub":"a","iss":"https://evil.example","aud":"silentshard""#,
                       #","sub":"a","iss":"https://auth.example","aud":"other""#,
                       #","sub":"a","iss":"https://auth.example","aud":["x","y"]"#] {
            await #expect(throws: AuthenticationError.invalidToken) { _ = try await verifier.verify(token: Self.jwt(claims)) }
        }
        for claims in [#","sub":"a","iss":"https://auth.example","aud":"silentshard""#,
                       #","sub":"a","iss":"https://auth.example","aud":["x","silentshard"]"#] {
            #expect(try await verifier.verify(token: Self.jwt(claims)).subject == "a")
        }
    }

    @Test func hookSubjectsAreNeverCut() async throws {
        let long = String(repeating: "b", count: 129)
        for (answer, expected) in [("alice", "alice"), (long, nil), (#"{"sub":"\#(long)"}"#, nil), (#"{"sub":""}"#, nil),
                                   (#"{"sub":"bob","scope":"sign"}"#, "bob")] {
            let hook = try RecordingHTTPServer(answer: answer)
            defer { hook.stop() }
            let verifier = try HookTokenVerifier(url: "http://127.0.0.1:\(hook.port)/verify")
            if let expected {
                #expect(try await verifier.verify(token: "t").subject == expected)
            } else {
                await #expect(throws: AuthenticationError.invalidToken, "\(answer.prefix(20))") {
                    _ = try await verifier.verify(token: "t")
                }
            }
        }
    }
}
