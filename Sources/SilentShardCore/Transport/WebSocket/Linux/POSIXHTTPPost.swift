#if !canImport(Darwin)
import Foundation
import Glibc

/// HTTP/1.1 POST over the same socket/TLS code as the WebSocket client, on a short-lived thread:
/// `Content-Length` request, `Connection: close`, response read in full (`Content-Length`, chunked,
/// or until the end of the stream), bounded by the maximum message size.
///
/// Chosen over FoundationNetworking's URLSession (libcurl) so that `wss`/`https` share one trust
/// policy (`trustedRootCertificates`, host-name checks), one error model and one resource model.
enum POSIXHTTPPost {
    static func post(endpoint: NetworkEndpoint, body: Data, bearerToken: String?, settings: WebSocketSettings) async throws -> Data {
        guard body.count <= settings.maximumMessageSize else {
            throw NetworkError.messageTooLarge(limit: settings.maximumMessageSize)
        }
        let signal = try WakeSignal()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
                let thread = Thread {
                    nameThisThread("SilentShardPost")
                    blockSIGPIPEOnThisThread()
                    let result = Result { try exchange(endpoint: endpoint, body: body, bearerToken: bearerToken, settings: settings, signal: signal) }
                    signal.close()
                    continuation.resume(with: result)
                }
                thread.start()
            }
        } onCancel: {
            signal.cancel()
        }
    }

    private static func exchange(
        endpoint: NetworkEndpoint, body: Data, bearerToken: String?, settings: WebSocketSettings, signal: WakeSignal
    ) throws -> Data {
        let connectDeadline = ContinuousClock.now + settings.connectTimeout
        let stream = try SocketStream.connect(endpoint: endpoint, trustedRoots: settings.trustedRootCertificates,
                                              deadline: connectDeadline, signal: signal)
        defer { stream.close() }
        var head = "POST \(endpoint.target) HTTP/1.1\r\nHost: \(endpoint.hostHeader)\r\n"
        head += "Content-Type: application/octet-stream\r\nContent-Length: \(body.count)\r\n"
        head += "Accept: application/octet-stream\r\nConnection: close\r\n"
        head += "User-Agent: SilentShard/\(SilentShard.version)\r\n"
        if let bearerToken {
            // Never a CR, LF or NUL in a header (WebSocketTransport.post checked the syntax already).
            guard BearerToken.isWellFormed(bearerToken) else { throw HTTPHeaderFields.notAllowed("Authorization") }
            head += "Authorization: Bearer \(bearerToken)\r\n"
        }
        head += "\r\n"
        let deadline = ContinuousClock.now + settings.readTimeout
        try stream.writeAll(Array(head.utf8) + Array(body), deadline: deadline)

        var received: [UInt8] = []
        var response: (head: HTTPResponseHead, length: Int)?
        var ended = false
        let limit = settings.maximumMessageSize
        while true {
            if response == nil {
                do {
                    response = try HTTPResponseHead.parse(received)
                } catch {
                    throw NetworkError.invalidHandshake(reason: "malformed HTTP response")
                }
                if let parsed = response, parsed.head.status < 200 {
                    // Skip interim responses (100 Continue).
                    received.removeFirst(parsed.length)
                    response = nil
                    continue
                }
            }
            if let (head, length) = response {
                guard (200...299).contains(head.status) else { throw NetworkError.httpStatus(head.status) }
                let bodyBytes = received[length...]
                // Transfer-Encoding wins over Content-Length (RFC 9112 §6.3).
                if head.values("Transfer-Encoding").contains(where: { $0.lowercased().contains("chunked") }) {
                    // A complete chunked body ends with CRLF CRLF: decode only then (or at the end of
                    // the stream), not after every read.
                    guard ended || bodyBytes.suffix(4).elementsEqual([13, 10, 13, 10]) else {
                        guard bodyBytes.count <= limit + limit / 8 + 64 * 1024 else { throw NetworkError.messageTooLarge(limit: limit) }
                        ended = try !stream.readAvailable(into: &received, deadline: deadline)
                        continue
                    }
                    do {
                        if let decoded = try HTTPChunkedBody.decode(bodyBytes, limit: limit) { return Data(decoded) }
                    } catch .tooLarge {
                        throw NetworkError.messageTooLarge(limit: limit)
                    } catch {
                        throw NetworkError.invalidHandshake(reason: "malformed chunked body")
                    }
                } else if let value = head.values("Content-Length").first {
                    guard let expected = Int(value), expected >= 0 else { throw NetworkError.invalidHandshake(reason: "bad Content-Length") }
                    guard expected <= limit else { throw NetworkError.messageTooLarge(limit: limit) }
                    if bodyBytes.count >= expected { return Data(bodyBytes.prefix(expected)) }
                } else {
                    guard bodyBytes.count <= limit else { throw NetworkError.messageTooLarge(limit: limit) }
                    if ended { return Data(bodyBytes) }
                }
            }
            if ended { throw NetworkError.connectionLost }
            guard received.count <= limit + HTTPResponseHead.maximumSize + 64 * 1024 else {
                throw NetworkError.messageTooLarge(limit: limit)
            }
            ended = try !stream.readAvailable(into: &received, deadline: deadline)
        }
    }
}
#endif
