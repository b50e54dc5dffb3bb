import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP proxy that delays each direction by `oneWay` (half the round-trip time), for
/// `silentshard bench --rtt MS` (no netem here). Every byte read at time t is written at t + oneWay, in
/// order; an end of stream is passed on at its own time (write side shut down). TCP's handshake is
/// emulated too: the kernel completes a loopback connect at once, so the client's bytes are held until one
/// full RTT after the accept (+ oneWay), when they would first reach the server on a real link. Each
/// connection runs on four threads (a reader and a writer per direction): the bench opens one at a time.
final class DelayProxy: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let upstreamPort: Int
    private let oneWay: TimeInterval
    private var roundTrip: TimeInterval { 2 * oneWay }
    private let stopped = LockedFlag()

    init(upstreamPort: Int, roundTripMilliseconds: Int) throws {
        self.upstreamPort = upstreamPort
        oneWay = TimeInterval(roundTripMilliseconds) / 2000
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("proxy: socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw BenchError("proxy: bind/listen")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    func stop() {
        stopped.set()
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private func acceptLoop() {
        while !stopped.isSet {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { if stopped.isSet { return } else { continue } }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: UInt16(upstreamPort))
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard upstream >= 0, connected == 0 else {
                close(client)
                if upstream >= 0 { close(upstream) }
                continue
            }
            var yes: Int32 = 1
            for descriptor in [client, upstream] {
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            }
            let closer = Closer(client, upstream)
            // The handshake: nothing from the client reaches the server before SYN, SYN-ACK and ACK would have.
            pump(from: client, to: upstream, closer: closer, notBefore: Date().addingTimeInterval(roundTrip + oneWay))
            pump(from: upstream, to: client, closer: closer, notBefore: .distantPast)
        }
    }

    /// One direction: the reader stamps each chunk with its due time; the writer sends it then.
    private func pump(from source: Int32, to destination: Int32, closer: Closer, notBefore: Date) {
        let queue = DueQueue()
        let delay = oneWay
        Thread {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = recv(source, &buffer, buffer.count, 0)
                queue.push(max(Date().addingTimeInterval(delay), notBefore), count > 0 ? Array(buffer[0..<count]) : nil)
                if count <= 0 { return }
            }
        }.start()
        Thread {
            while let (due, chunk) = queue.pop() {
                let wait = due.timeIntervalSinceNow
                if wait > 0 { Thread.sleep(forTimeInterval: wait) }
                guard let chunk else {
                    shutdown(destination, Int32(SHUT_WR))
                    closer.finished()
                    return
                }
                var offset = 0
                while offset < chunk.count {
                    let sent = chunk[offset...].withUnsafeBytes { send(destination, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if sent <= 0 {
                        closer.finished()
                        return
                    }
                    offset += sent
                }
            }
        }.start()
    }
}

/// A FIFO of (due time, chunk or end of stream) between a reader and a writer thread.
private final class DueQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [(Date, [UInt8]?)] = []

    func push(_ due: Date, _ chunk: [UInt8]?) {
        condition.lock()
        items.append((due, chunk))
        condition.signal()
        condition.unlock()
    }

    func pop() -> (Date, [UInt8]?)? {
        condition.lock()
        defer { condition.unlock() }
        while items.isEmpty { condition.wait() }
        return items.removeFirst()
    }
}

/// Closes both sockets of a connection once both directions ended.
private final class Closer: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining = 2
    private let descriptors: (Int32, Int32)

    init(_ first: Int32, _ second: Int32) { descriptors = (first, second) }

    func finished() {
        lock.lock()
        remaining -= 1
        let done = remaining == 0
        lock.unlock()
        if done {
            close(descriptors.0)
            close(descriptors.1)
        }
    }
}

private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
    func set() { lock.lock(); value = true; lock.unlock() }
}
