#if canImport(Darwin)
import Foundation
import Security

/// Server-trust evaluation for `URLSession` when `WebsocketConfig.trustedRootCertificates` is set:
/// the chain must end in one of those roots (only), and the system's SSL policy (host name,
/// validity, key usage) still applies. Without custom roots the system decides.
enum ServerTrust {
    static func evaluate(
        _ challenge: URLAuthenticationChallenge, trustedRoots: [Data]
    ) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust
        else { return (.performDefaultHandling, nil) }
        guard !trustedRoots.isEmpty else { return (.performDefaultHandling, nil) }
        let anchors = trustedRoots.compactMap { SecCertificateCreateWithData(nil, $0 as CFData) }
        guard anchors.count == trustedRoots.count,
              SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
              SecTrustSetAnchorCertificatesOnly(trust, true) == errSecSuccess
        else { return (.cancelAuthenticationChallenge, nil) }
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error) else { return (.cancelAuthenticationChallenge, nil) }
        return (.useCredential, URLCredential(trust: trust))
    }
}
#endif
