#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import MPCCrypto

/// A plain HTTP/1.1 server on 127.0.0.1 that records the raw bytes of each request it receives and
/// answers every one with 200 and a fixed body, then closes. For tests that must see exactly what a
/// client wrote on the wire (e.g. that no token ever adds a header to a verifier hook's request).
public final class RecordingHTTPServer: Sendable {
    /// The port it listens on.
    public let port: Int
    private let listener: Int32
    private let requests = LockedValue<[[UInt8]]>([])
    private let stopped = LockedValue(false)

    /// Starts listening on a free loopback port; every request gets 200 with `answer` as its body.
    public init(answer: String = "hook-user") throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let response = Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(answer.utf8.count)\r\nConnection: close\r\n\r\n\(answer)".utf8)
        let thread = Thread { [self] in serve(response: response) }
        thread.start()
    }

    /// Every request received so far, as raw bytes (head and body).
    public var received: [[UInt8]] { requests.withLock { $0 } }

    /// Every request's head (up to the blank line) as text.
    public var receivedHeads: [String] {
        received.map { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            return text.components(separatedBy: "\r\n\r\n").first ?? text
        }
    }

    /// Stops accepting connections.
    public func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(response: [UInt8]) {
        while !stopped.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            // Reads the head, then as much body as Content-Length announces (or until the peer closes).
            while bytes.count < 1 << 20 {
                let count = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                bytes += buffer[0..<count]
                if let expected = Self.expectedLength(bytes), bytes.count >= expected { break }
            }
            requests.withLock { $0.append(bytes) }
            _ = response.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(client)
        }
    }

    /// Head length plus Content-Length, once the head is complete.
    private static func expectedLength(_ bytes: [UInt8]) -> Int? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = text[..<end.lowerBound]
        let headLength = text[..<end.upperBound].utf8.count
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            return headLength + (Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) ?? 0)
        }
        return headLength
    }
}
