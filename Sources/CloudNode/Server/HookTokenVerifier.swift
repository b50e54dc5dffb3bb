import Foundation
import SilentShardCore

/// Asks an operator service: POSTs the token (as the body and as `Authorization: Bearer`) to a
/// URL; any 2xx accepts (a short, printable response body becomes the principal's subject; a JSON
/// object answer gives `sub` and `scope`/`scopes`), any other status or a transport failure refuses.
package struct HookTokenVerifier: TokenVerifier {
    private let url: URL
    private let timeout: Duration

    /// `url` must be `http`/`https`.
    package init(url: String, timeout: Duration = .seconds(5)) throws(NodeServerError) {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
              parsed.host != nil
        else { throw .invalidConfiguration("hook URL") }
        self.url = parsed
        self.timeout = timeout
    }

    package var name: String { "hook" }

    package func verify(token: String?) async throws(AuthenticationError) -> Principal {
        guard let token else { throw .missingToken }
        // Never forwarded unless it is a b64token (no CR/LF/NUL can reach the hook's request head).
        guard BearerToken.isWellFormed(token) else { throw .invalidToken }
        var config = WebsocketConfig(url: url.absoluteString, authenticationToken: token)
        config.connectTimeout = timeout
        config.readTimeout = timeout
        config.maximumMessageSize = 4096
        let body: Data
        do {
            body = try await WebSocketTransport.post(url: url, body: Data(token.utf8), bearerToken: token,
                                                     settings: WebSocketSettings(config))
        } catch NetworkError.httpStatus(_) {
            throw .invalidToken
        } catch {
            throw .hookUnavailable
        }
        // A JSON object answer may name the subject and scopes: {"sub": "…", "scope": "export sign"}.
        if body.first == UInt8(ascii: "{"), body.count <= 4096,
           let claims = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] {
            // Whole or refused (finding 11: a cut subject could name another principal).
            if let sub = claims["sub"], (sub as? String).map({ $0.isEmpty || $0.utf8.count > 128 }) ?? true {
                throw .invalidToken
            }
            let subject = claims["sub"] as? String
            return Principal(subject: subject ?? "hook", scopes: try JWTHS256Verifier.scopes(claims),
                             deviceBinding: try JWTHS256Verifier.deviceBinding(claims), identifiesSubject: subject != nil)
        }
        let subject = String(decoding: body, as: UTF8.self)
        let printable = subject.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
        // A printable answer is the subject, whole: one longer than 128 bytes is refused, not cut.
        if printable, body.count > 128 { throw .invalidToken }
        let named = printable && !subject.isEmpty
        return Principal(subject: named ? subject : "hook", identifiesSubject: named)
    }
}
