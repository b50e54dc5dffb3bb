import CloudNode
import Dispatch
import Foundation
import MPCCrypto

/// What the node decodes before any session exists: the request path (`NodeRouteTable.route`) and
/// the app's bearer token (`JWTHS256Verifier.verify`). Selector bit 0 set: the rest is a URI path
/// (bit 1: POST). Clear: the rest is a token; with bit 2 set it is `header.payload` and the HS256
/// signature is appended here with the fixed secret, so mutations reach the claims parser.
enum NodeTargets {
    static let secret = FixedKeys.bytes(0x5C, 32)
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let verifier = fixture("JWT verifier") { try JWTHS256Verifier(secret: secret, now: { now }) }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func signed(_ unsigned: String) -> String {
        unsigned + "." + base64URL(SHA256.hmac(key: secret, data: Array(unsigned.utf8)))
    }

    static var unsignedToken: String {
        base64URL(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "."
            + base64URL(Array(#"{"sub":"app-1","exp":1800000600,"nbf":1799999000,"scope":"keygen sign"}"#.utf8))
    }

    /// Runs the async verifier to completion (the harness thread is not a cooperative-pool thread).
    static func verify(_ token: String) -> Principal? {
        final class Box: @unchecked Sendable { var value: Principal? }
        let box = Box(), done = DispatchSemaphore(value: 0)
        Task {
            box.value = try? await verifier.verify(token: token)
            done.signal()
        }
        done.wait()
        return box.value
    }

    static let auth = FuzzTarget(
        name: "node-auth", summary: "node request path routing, JWT HS256 bearer tokens",
        seeds: {
            [
                [1] + Array("/v3/ecdsa/sign".utf8), [3] + Array("/v3/eddsa/export".utf8),
                [3] + Array("/v3/trio/eddsa/presign-final".utf8), [1] + Array("/v3/trio/hard-derivation".utf8),
                [0] + Array(signed(unsignedToken).utf8), [4] + Array(unsignedToken.utf8),
            ]
        },
        prepare: { _ = verifier },
        run: { input in
            guard let (selector, rest) = split(input) else { return }
            let text = String(decoding: rest, as: UTF8.self)
            if selector & 1 != 0 {
                guard let route = NodeRouteTable.standard.route(for: text, post: selector & 2 != 0) else { return }
                accepted()
                expect(text.hasPrefix("/v3/") && text.hasSuffix("/" + route.action), "route from another path")
                return
            }
            guard let principal = verify(selector & 4 != 0 ? signed(text) : text) else { return }
            accepted()
            expect(principal.subject.utf8.count <= 4 * 128, "subject not truncated")
        })
}
