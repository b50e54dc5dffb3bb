// Linux type-check build only (SILENTSHARD_TYPECHECK_APPLE, scripts/check-apple-typecheck): the
// Security framework's SecTrust calls in ServerTrust.swift cannot compile here, so this stand-in gives
// the URLSession engine the same signature. Never part of a product; it refuses every challenge.
#if SILENTSHARD_TYPECHECK_APPLE && !canImport(Darwin)
import Foundation
import FoundationNetworking

enum ServerTrust {
    static func evaluate(
        _ challenge: URLAuthenticationChallenge, trustedRoots: [Data]
    ) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        (.cancelAuthenticationChallenge, nil)
    }
}
#endif
