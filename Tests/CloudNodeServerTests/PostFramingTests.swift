import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Counts how often the node ran its POST handler.
private final class CountingPostHandler: PostHandler {
    let calls = LockedValue(0)
    func handle(_ request: PostRequest) async throws -> PostResponse {
        calls.withLock { $0 += 1 }
        return PostResponse(body: request.body)
    }
}

/// Security review finding 7: a POST carrying both `Content-Length` and `Transfer-Encoding: chunked`
/// ran the handler (token verifier, hook call, log line) hundreds of times for one request, and a chunked
/// POST without `Content-Length` was never answered. RFC 9112 §6.3: a message with both is an attack
/// vector. The node now answers such requests 400, a chunked one 411, and runs the handler at most once
/// per request.
@Suite("Finding 7: one POST runs the handler at most once; Transfer-Encoding is refused", .timeLimit(.minutes(30)))
struct PostFramingTests {
    /// Sends `request` on a raw socket and returns everything the node sent until it closed (or 10 s).
    static func exchange(port: Int, _ request: [UInt8]) throws -> String {
        guard let fd = LoopbackSocket.connect(port: port) else { throw NetworkError.connectionLost }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // Until the node closes, or a first response is complete (its head and Content-Length bytes)
        // and nothing more arrives for a moment.
        while received.count < 1 << 20 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[..<count]
            if Self.firstResponseIsComplete(received) {
                var short = timeval(tv_sec: 0, tv_usec: 300_000)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &short, socklen_t(MemoryLayout<timeval>.size))
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    static func firstResponseIsComplete(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return false }
        let length = text[..<end.lowerBound].split(separator: "\r\n")
            .first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return text[end.upperBound...].utf8.count >= length
    }

    static func post(_ headers: String, body: String) -> [UInt8] {
        Array("POST /v3/ecdsa/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer t\r\n\(headers)\r\n\(body)".utf8)
    }

    static func status(_ response: String) -> Int? {
        response.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) }
    }

    @Test func contentLengthAndChunkedTogetherAreRefusedWithoutRunningTheHandler() async throws {
        let handler = CountingPostHandler()
        let node = try TestNode.start(verifier: try StaticTokenVerifier(token: "t"), postHandler: handler)
        let chunked = "5\r\nhello\r\n" + String(repeating: "1\r\nx\r\n", count: 200) + "0\r\n\r\n"
        let both = Self.post("Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", body: chunked)
        let answer = try Self.exchange(port: node.port, both)
        #expect(Self.status(answer) == 400, "\(answer.prefix(80))")
        #expect(answer.components(separatedBy: "HTTP/1.1 ").count - 1 == 1, "more than one response")

        // Chunked without Content-Length: answered (411), not left hanging.
        let onlyChunked = Self.post("Transfer-Encoding: chunked\r\n", body: chunked)
        #expect(Self.status(try Self.exchange(port: node.port, onlyChunked)) == 411)
        // Wait for any handler run the requests started (they are dispatched to Swift tasks).
        try await Task.sleep(for: .milliseconds(200))
        #expect(handler.calls.withLock { $0 } == 0)

        // A well-formed POST runs the handler exactly once.
        let good = Self.post("Content-Length: 5\r\n", body: "hello")
        let served = try Self.exchange(port: node.port, good)
        #expect(Self.status(served) == 200 && served.hasSuffix("hello"), "\(served)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(handler.calls.withLock { $0 } == 1)
        await node.server.stop()
    }
}
