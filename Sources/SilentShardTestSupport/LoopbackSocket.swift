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
    /// nothing after it is consumed). nil if the connection failed.
    public static func upgrade(port: Int, path: String = "/v3/ecdsa/keygen", subprotocol: String = "duo-instance",
                               timeout: Int = 10) -> (fd: Int32, head: String)? {
        guard let fd = connect(port: port) else { return nil }
        var interval = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var head: [UInt8] = []
        var byte = [UInt8](repeating: 0, count: 1)
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]), head.count < 16 << 10 {
            guard (byte.withUnsafeMutableBytes { recv(fd, $0.baseAddress, 1, 0) }) == 1 else { break }
            head += byte
        }
        return (fd, String(decoding: head, as: UTF8.self))
    }
}
