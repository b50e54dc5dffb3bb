#if !canImport(Darwin)
internal import COpenSSL
import Foundation
import Glibc

/// A non-blocking TCP connection, optionally wrapped in TLS, owned by exactly one thread (OpenSSL
/// handles must not be shared). Blocking helpers wait with `poll` on the socket and the owner's
/// ``WakeSignal``, honouring a deadline and cancellation.
final class SocketStream {
    /// Result of one read or write attempt.
    enum IOResult {
        case bytes(Int)
        /// Nothing now; `wantsWrite`: TLS needs the socket writable to proceed.
        case wouldBlock(wantsWrite: Bool)
        case end
    }

    let fd: Int32
    private let tls: TLSClient?
    private let signal: WakeSignal
    private var closed = false

    private init(fd: Int32, tls: TLSClient?, signal: WakeSignal) {
        self.fd = fd
        self.tls = tls
        self.signal = signal
    }

    deinit { close() }

    /// Resolves, connects (trying each address) and completes the TLS handshake when `secure`.
    static func connect(
        endpoint: NetworkEndpoint, trustedRoots: [Data], deadline: ContinuousClock.Instant, signal: WakeSignal
    ) throws -> SocketStream {
        let fd = try connectTCP(host: endpoint.host, port: endpoint.port, deadline: deadline, signal: signal)
        var noDelay: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        guard endpoint.secure else { return SocketStream(fd: fd, tls: nil, signal: signal) }
        let tls: TLSClient
        do {
            tls = try TLSClient(fd: fd, host: endpoint.host, trustedRoots: trustedRoots)
        } catch {
            _ = Glibc.close(fd)
            throw error
        }
        let stream = SocketStream(fd: fd, tls: tls, signal: signal)
        while true {
            ERR_clear_error()
            let result = SSL_connect(tls.ssl)
            if result == 1 { return stream }
            switch SSL_get_error(tls.ssl, result) {
            case SSL_ERROR_WANT_READ: try stream.wait(readable: true, writable: false, deadline: deadline)
            case SSL_ERROR_WANT_WRITE: try stream.wait(readable: false, writable: true, deadline: deadline)
            default: throw tls.handshakeFailure()
            }
        }
    }

    private static func connectTCP(host: String, port: Int, deadline: ContinuousClock.Instant, signal: WakeSignal) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            throw NetworkError.connectionFailed(reason: "resolving \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = NetworkError.connectionFailed(reason: "no address for \(host)")
        var cursor = list
        while let info = cursor?.pointee {
            cursor = info.ai_next
            let fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            var error: Int32 = 0
            if Glibc.connect(fd, info.ai_addr, info.ai_addrlen) != 0 {
                error = errno
                if error == EINPROGRESS {
                    do {
                        try waitDescriptor(fd, readable: false, writable: true, deadline: deadline, signal: signal)
                    } catch {
                        _ = Glibc.close(fd)
                        throw error
                    }
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    error = 0
                    if getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 { error = errno }
                }
            }
            if error == 0 { return fd }
            _ = Glibc.close(fd)
            lastError = error == ECONNREFUSED
                ? .connectionRefused(host: host, port: port)
                : .connectionFailed(reason: String(cString: strerror(error)))
        }
        throw lastError
    }

    /// Waits until the socket is readable/writable; throws `.timeout` at the deadline and
    /// `CancellationError` when the signal was cancelled.
    func wait(readable: Bool, writable: Bool, deadline: ContinuousClock.Instant) throws {
        try Self.waitDescriptor(fd, readable: readable, writable: writable, deadline: deadline, signal: signal)
    }

    private static func waitDescriptor(
        _ fd: Int32, readable: Bool, writable: Bool, deadline: ContinuousClock.Instant, signal: WakeSignal
    ) throws {
        var events: Int16 = 0
        if readable { events |= Int16(POLLIN) }
        if writable { events |= Int16(POLLOUT) }
        while true {
            if signal.isCancelled { throw CancellationError() }
            var fds = [pollfd(fd: fd, events: events, revents: 0), pollfd(fd: signal.descriptor, events: Int16(POLLIN), revents: 0)]
            let timeout = deadline.pollTimeoutFromNow
            let ready = poll(&fds, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                throw NetworkError.connectionFailed(reason: "poll: \(String(cString: strerror(errno)))")
            }
            if fds[1].revents != 0 { signal.drain() }
            if fds[0].revents != 0 { return }
            if ready == 0 && timeout == 0 { throw NetworkError.timeout }
            if ready == 0 && ContinuousClock.now >= deadline { throw NetworkError.timeout }
        }
    }

    /// One read attempt into `buffer`. TLS: call again until `.wouldBlock` to drain OpenSSL's buffer.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(NetworkError) -> IOResult {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .bytes(0) }
        if let tls {
            ERR_clear_error()
            let count = SSL_read(tls.ssl, base, Int32(clamping: buffer.count))
            if count > 0 { return .bytes(Int(count)) }
            switch SSL_get_error(tls.ssl, count) {
            case SSL_ERROR_WANT_READ: return .wouldBlock(wantsWrite: false)
            case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantsWrite: true)
            case SSL_ERROR_ZERO_RETURN: return .end
            default:
                ERR_clear_error()
                throw .connectionLost
            }
        }
        while true {
            let count = recv(fd, base, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .end }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock(wantsWrite: false) }
            throw .connectionLost
        }
    }

    /// One write attempt of `bytes`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(NetworkError) -> IOResult {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .bytes(0) }
        if let tls {
            ERR_clear_error()
            let count = SSL_write(tls.ssl, base, Int32(clamping: bytes.count))
            if count > 0 { return .bytes(Int(count)) }
            switch SSL_get_error(tls.ssl, count) {
            case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantsWrite: true)
            case SSL_ERROR_WANT_READ: return .wouldBlock(wantsWrite: false)
            default:
                ERR_clear_error()
                throw .connectionLost
            }
        }
        while true {
            let count = send(fd, base, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .bytes(count) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock(wantsWrite: true) }
            throw .connectionLost
        }
    }

    /// Writes all of `bytes`, waiting as needed.
    func writeAll(_ bytes: [UInt8], deadline: ContinuousClock.Instant) throws {
        var offset = 0
        while offset < bytes.count {
            let result = try bytes.withUnsafeBytes { raw throws(NetworkError) in
                try write(UnsafeRawBufferPointer(rebasing: raw[offset...]))
            }
            switch result {
            case .bytes(let count): offset += count
            case .wouldBlock(let wantsWrite): try wait(readable: !wantsWrite, writable: wantsWrite, deadline: deadline)
            case .end: throw NetworkError.connectionLost
            }
        }
    }

    /// Reads what is available (waiting for at least one byte) and appends it to `buffer`.
    /// Returns false at the end of the stream.
    func readAvailable(into buffer: inout [UInt8], deadline: ContinuousClock.Instant) throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var gotAny = false
        while true {
            let result: IOResult
            do {
                result = try chunk.withUnsafeMutableBytes { raw throws(NetworkError) in try read(into: raw) }
            } catch {
                if gotAny { return true }  // report the error on the next call, after this data
                throw error
            }
            switch result {
            case .bytes(let count):
                buffer.append(contentsOf: chunk[0..<count])
                gotAny = true
            case .wouldBlock(let wantsWrite):
                if gotAny { return true }
                try wait(readable: !wantsWrite, writable: wantsWrite, deadline: deadline)
            case .end:
                return gotAny
            }
        }
    }

    /// Sends TLS close_notify (without waiting for the peer's) and closes the socket. Idempotent.
    func close() {
        guard !closed else { return }
        closed = true
        if let tls {
            ERR_clear_error()
            _ = SSL_shutdown(tls.ssl)
            ERR_clear_error()
        }
        _ = Glibc.close(fd)
    }
}
#endif
