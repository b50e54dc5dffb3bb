// Compiled on Apple platforms, and on Linux under SILENTSHARD_TYPECHECK_APPLE (scripts/check-apple-typecheck:
// type-checked against FoundationNetworking, never linked into a Linux product; docs/apple.md).
#if canImport(Darwin) || SILENTSHARD_TYPECHECK_APPLE
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionConfiguration {
    /// Ephemeral, no cookie store, no cache, and failing at once when offline (no waiting for
    /// connectivity): the configuration both URLSession clients start from.
    static func silentShardEphemeral() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        #if canImport(Darwin)
        configuration.waitsForConnectivity = false  // FoundationNetworking: read-only, always false
        #endif
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        return configuration
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
