// Compiled on Apple platforms, and on Linux under SILENTSHARD_TYPECHECK_APPLE (scripts/check-apple-typecheck:
// type-checked against FoundationNetworking, never linked into a Linux product; docs/apple.md).
#if canImport(Darwin) || SILENTSHARD_TYPECHECK_APPLE
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif


/// HTTP POST over an ephemeral `URLSession` (same trust policy as the WebSocket), invalidated
/// after the exchange.
enum URLSessionHTTPPost {
    private final class TrustDelegate: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        let trustedRoots: [Data]
        init(trustedRoots: [Data]) { self.trustedRoots = trustedRoots }

        func urlSession(_ session: URLSession, task: URLSessionTask,
                        didReceive challenge: URLAuthenticationChallenge) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            ServerTrust.evaluate(challenge, trustedRoots: trustedRoots)
        }
    }

    static func post(endpoint: NetworkEndpoint, body: Data, bearerToken: String?, settings: WebSocketSettings) async throws -> Data {
        guard body.count <= settings.maximumMessageSize else {
            throw NetworkError.messageTooLarge(limit: settings.maximumMessageSize)
        }
        let configuration = URLSessionConfiguration.silentShardEphemeral()
        configuration.timeoutIntervalForRequest = settings.readTimeout.timeInterval
        configuration.timeoutIntervalForResource = (settings.connectTimeout + settings.readTimeout).timeInterval
        let delegate = TrustDelegate(trustedRoots: settings.trustedRootCertificates)
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        defer { session.invalidateAndCancel() }
        var request = URLRequest(url: endpoint.url)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.setValue("application/octet-stream", forHTTPHeaderField: "Accept")
        if let bearerToken { request.setValue("Bearer \(bearerToken)", forHTTPHeaderField: "Authorization") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw URLSessionErrorMapping.map(error, endpoint: endpoint, response: nil)
        }
        guard let http = response as? HTTPURLResponse else { throw NetworkError.invalidHandshake(reason: "not HTTP") }
        guard (200...299).contains(http.statusCode) else { throw NetworkError.httpStatus(http.statusCode) }
        guard data.count <= settings.maximumMessageSize else {
            throw NetworkError.messageTooLarge(limit: settings.maximumMessageSize)
        }
        return data
    }
}
#endif
