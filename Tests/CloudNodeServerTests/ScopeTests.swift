import CloudNode
import Foundation
import MPCCrypto
import Testing

/// Token scopes (session.md §9.1): default = every operation except duo export; JWT `scope` /
/// `scopes`, the token file's `scope:` line and the hook's JSON answer grant them.
@Suite(.timeLimit(.minutes(30))) struct ScopeTests {
    static func jwt(claims: String) -> String {
        let header = TestJWT.base64url(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let exp = Int(Date().timeIntervalSince1970 + 600)
        let payload = TestJWT.base64url(Array(#"{"sub":"backend","exp":\#(exp)\#(claims)}"#.utf8))
        let input = header + "." + payload
        return input + "." + TestJWT.base64url(SHA256.hmac(key: TestJWT.secret, data: Array(input.utf8)))
    }

    @Test func defaultScopesExcludeExport() {
        let principal = Principal(subject: "x")
        #expect(!principal.allows(Principal.exportScope))
        #expect(principal.allows("sign") && principal.allows("keygen"))
        let granted = Principal(subject: "x", scopes: ["export"])
        #expect(granted.allows("export") && !granted.allows("sign"))
    }

    @Test func jwtScopeClaims() async throws {
        let verifier = try JWTHS256Verifier(secret: TestJWT.secret)
        let none = try await verifier.verify(token: Self.jwt(claims: ""))
        #expect(none.scopes == nil && !none.allows("export") && none.allows("sign"))
        let spaced = try await verifier.verify(token: Self.jwt(claims: #","scope":"export  sign""#))
        #expect(spaced.scopes == ["export", "sign"] && spaced.allows("export"))
        let array = try await verifier.verify(token: Self.jwt(claims: #","scopes":["export"]"#))
        #expect(array.scopes == ["export"] && !array.allows("keygen"))
        // A scope claim of another shape refuses the token.
        await #expect(throws: AuthenticationError.invalidToken) {
            _ = try await verifier.verify(token: Self.jwt(claims: #","scope":["export"]"#))
        }
        await #expect(throws: AuthenticationError.invalidToken) {
            _ = try await verifier.verify(token: Self.jwt(claims: #","scopes":"export""#))
        }
    }

    @Test func tokenFileScopeLine() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("node-token-\(UUID().uuidString)").path
        try Data("backend-secret\nscope: export sign\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let principal = try await StaticTokenVerifier(contentsOf: path).verify(token: "backend-secret")
        #expect(principal.scopes == ["export", "sign"])
        await #expect(throws: AuthenticationError.invalidToken) {
            _ = try await StaticTokenVerifier(contentsOf: path).verify(token: "scope: export sign")
        }
        let plain = try await StaticTokenVerifier(token: "t").verify(token: "t")
        #expect(plain.scopes == nil && !plain.allows("export"))
    }
}
