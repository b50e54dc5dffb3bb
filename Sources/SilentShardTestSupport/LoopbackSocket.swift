#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Raw TCP to a node on 127.0.0.1, for tests that speak below the WebSocket client (half-open
/// connections, reading an HTTP refusal's headers).
public enum LoopbackSocket {
    /// A blocking TCP connect to 127.0.0.1:`port`; the descriptor, or nil.
    public static func connect(port: Int) -> Int32? {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #if canImport(Glibc)
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #else
                Darwin.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                #endif
            }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// A raw WebSocket upgrade on 127.0.0.1:`port` for `path` with `subprotocol`: the descriptor, with
    /// receive and send timeouts of `timeout` seconds, and the response head (read byte by byte, so
    /// nothing after it is consumed). `headers`: extra request header lines (e.g. `X-Forwarded-For: …`).
    /// nil if the connection failed.
    public static func upgrade(port: Int, path: String = "/v3/ecdsa/keygen", subprotocol: String = "duo-instance",
                               headers: [String] = [], timeout: Int = 10) -> (fd: Int32, head: String)? {
        guard let fd = connect(port: port) else { return nil }
        setTimeouts(fd, seconds: timeout)
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n"
            + headers.map { $0 + "\r\n" }.joined() + "\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return (fd, readHead(fd))
    }

    /// Sends the head of a POST announcing a `contentLength`-byte body, and none of the body: the
    /// descriptor (timeouts of `timeout` seconds) for reading the answer with ``readHead(_:)``.
    public static func postHead(port: Int, path: String, contentLength: Int, headers: [String] = [],
                                timeout: Int = 10) -> Int32? {
        guard let fd = connect(port: port) else { return nil }
        setTimeouts(fd, seconds: timeout)
        let request = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
            + "Content-Length: \(contentLength)\r\n" + headers.map { $0 + "\r\n" }.joined() + "\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return fd
    }

    /// Sends `payload` as one masked binary WebSocket message (mask key 0, so the bytes go unchanged).
    @discardableResult
    public static func sendBinaryMessage(_ fd: Int32, _ payload: [UInt8]) -> Bool {
        var frame: [UInt8] = [0x82]
        switch payload.count {
        case ..<126: frame.append(0x80 | UInt8(payload.count))
        case ..<65_536: frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default: frame += [0x80 | 127] + withUnsafeBytes(of: UInt64(payload.count).bigEndian, Array.init)
        }
        frame += [0, 0, 0, 0] + payload
        let sent = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return sent == frame.count
    }

    private static func setTimeouts(_ fd: Int32, seconds: Int) {
        var interval = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Reads an HTTP response head byte by byte (up to the blank line, the receive timeout or 16 KiB).
    public static func readHead(_ fd: Int32) -> String {
        var head: [UInt8] = []
        var byte = [UInt8](repeating: 0, count: 1)
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]), head.count < 16 << 10 {
            guard (byte.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 1, 0) }) == 1 else { break }
            head += byte
        }
        return String(decoding: head, as: UTF8.self)
    }
}
