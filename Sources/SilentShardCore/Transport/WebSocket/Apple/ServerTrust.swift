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

extension Duration {
    /// Seconds as a `TimeInterval`, for Foundation APIs.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// Maps `URLSession` failures to ``NetworkError`` (never including URLs or tokens).
enum URLSessionErrorMapping {
    static func map(_ error: any Error, endpoint: NetworkEndpoint, response: URLResponse?) -> any Error {
        if error is NetworkError || error is CancellationError { return error }
        if let http = response as? HTTPURLResponse, http.statusCode != 101, !(200...299).contains(http.statusCode) {
            return NetworkError.handshakeRejected(status: http.statusCode)
        }
        let nsError = error as NSError
        if nsError.domain == NSPOSIXErrorDomain && nsError.code == Int(EMSGSIZE) {
            return error  // mapped by the caller, which knows the limit
        }
        guard let urlError = error as? URLError else {
            return NetworkError.connectionFailed(reason: "\(nsError.domain) \(nsError.code)")
        }
        switch urlError.code {
        case .cancelled: return CancellationError()
        case .timedOut: return NetworkError.timeout
        case .cannotConnectToHost: return NetworkError.connectionRefused(host: endpoint.host, port: endpoint.port)
        case .networkConnectionLost: return NetworkError.connectionLost
        case .badServerResponse: return NetworkError.invalidHandshake(reason: "bad server response")
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
             .serverCertificateNotYetValid, .secureConnectionFailed, .clientCertificateRejected,
             .clientCertificateRequired, .appTransportSecurityRequiresSecureConnection:
            return NetworkError.tlsFailure(reason: "URLError \(urlError.code.rawValue)")
        default:
            return NetworkError.connectionFailed(reason: "URLError \(urlError.code.rawValue)")
        }
    }
}
#endif
