#if !canImport(Darwin)
import Foundation
import Glibc

/// The I/O thread of ``POSIXWebSocketConnection``: connect and upgrade, then the poll loop that
/// writes queued frames, reads and decodes, answers pings and runs the closing handshake.
extension POSIXWebSocketConnection {
    enum Phase {
        case open
        /// We sent a close frame; waiting for the peer's until the deadline.
        case closeSent(deadline: ContinuousClock.Instant)
        /// The closing handshake is complete, or the connection failed: flush, then stop.
        case finishing
    }

    struct OutFrame {
        var bytes: [UInt8]
        var offset = 0
        /// The send that completes with this frame (its last).
        var sendID: Int?
        var continuation: CheckedContinuation<Void, any Error>?
        var deadline: ContinuousClock.Instant?
    }

    func run(connected: CheckedContinuation<Void, any Error>) {
        blockSIGPIPEOnThisThread()
        let stream: SocketStream
        var leftover: [UInt8] = []
        do {
            let deadline = ContinuousClock.now + settings.connectTimeout
            stream = try SocketStream.connect(endpoint: endpoint, trustedRoots: settings.trustedRootCertificates,
                                              deadline: deadline, signal: signal)
            let handshake = WebSocketHandshake(endpoint: endpoint, subprotocol: subprotocol, headers: settings.headers)
            try stream.writeAll(handshake.request, deadline: deadline)
            var received: [UInt8] = []
            while true {
                guard try stream.readAvailable(into: &received, deadline: deadline) else { throw NetworkError.connectionLost }
                let parsed: (head: HTTPResponseHead, length: Int)?
                do {
                    parsed = try HTTPResponseHead.parse(received)
                } catch {
                    throw NetworkError.invalidHandshake(reason: "malformed HTTP response")
                }
                if let parsed {
                    try handshake.validate(parsed.head)
                    leftover = Array(received[parsed.length...])
                    break
                }
            }
        } catch {
            finish(error: .notConnected)
            connected.resume(throwing: error)
            return
        }
        connected.resume()
        let reason = serve(stream: stream, leftover: leftover)
        stream.close()
        finish(error: reason)
    }

    /// The connected loop; returns why the connection ended.
    func serve(stream: SocketStream, leftover: [UInt8]) -> NetworkError {
        var decoder = WebSocketFrameDecoder(maximumPayload: settings.maximumMessageSize)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: settings.maximumMessageSize)
        var outbound: [OutFrame] = []
        var phase = Phase.open
        var ending: NetworkError?
        var readWantsWrite = false
        var generator = SystemRandomNumberGenerator()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer {
            buffer.deallocate()
            for frame in outbound { frame.continuation?.resume(throwing: ending ?? NetworkError.notConnected) }
        }
        decoder.append(leftover)

        /// Handles every complete frame in the decoder; false when reading must stop.
        func decodeFrames() -> Bool {
            do {
                while let frame = try decoder.nextFrame() {
                    if let event = try assembler.consume(frame) { handle(event) }
                    if case .finishing = phase { return false }
                }
                return true
            } catch {
                let closeError: NetworkError = error == .messageTooLarge
                    ? .messageTooLarge(limit: settings.maximumMessageSize)
                    : .protocolViolation(closeCode: Int(error.closeCode))
                if case .open = phase { startClose(code: error.closeCode, because: closeError) }
                phase = .finishing
                return false
            }
        }

        func enqueueControl(_ bytes: [UInt8]) {
            // After a partially written frame, never inside it.
            let position = outbound.first.map { $0.offset > 0 ? 1 : 0 } ?? 0
            outbound.insert(OutFrame(bytes: bytes), at: position)
        }
        func startClose(code: UInt16, because reason: NetworkError) {
            if ending == nil { ending = reason }
            outbound.removeAll { frame in
                guard frame.offset == 0 else { return false }
                frame.continuation?.resume(throwing: reason)
                return true
            }
            outbound.append(OutFrame(bytes: WebSocketFrameEncoder.close(code: code, maskKey: generator.next())))
            phase = .closeSent(deadline: .now + settings.closeTimeout)
            setTerminal(reason)
        }
        func handle(_ event: WebSocketMessageAssembler.Event) {
            switch event {
            case .message(let message):
                if case .open = phase { deliver(message) }
            case .ping(let payload):
                if case .open = phase {
                    enqueueControl(payload.withUnsafeBytes {
                        WebSocketFrameEncoder.frame(opcode: .pong, fin: true, payload: $0, maskKey: generator.next())
                    })
                }
            case .pong:
                break
            case .close(let code, let reason):
                switch phase {
                case .open:
                    let peerClose = NetworkError.closedByPeer(code: Int(code ?? 1005), reason: reason)
                    ending = peerClose
                    setTerminal(peerClose)
                    outbound.removeAll { frame in
                        guard frame.offset == 0 else { return false }
                        frame.continuation?.resume(throwing: peerClose)
                        return true
                    }
                    outbound.append(OutFrame(bytes: WebSocketFrameEncoder.close(code: code ?? 1000, maskKey: generator.next())))
                    phase = .finishing
                case .closeSent:
                    phase = .finishing
                case .finishing:
                    break
                }
            }
        }

        // Frames that arrived together with the upgrade response.
        _ = decodeFrames()

        while true {
            // 1. Commands from callers.
            let (sends, closes, abort, expired) = lock.withLock { () -> ([PendingSend], [CheckedContinuation<Void, Never>], Bool, Waiter?) in
                let sends = pendingSends
                pendingSends = []
                for send in sends { inflightSendIDs.insert(send.id) }
                let closes = closeRequests
                closeRequests = []
                var expired: Waiter?
                if let current = waiter, current.deadline <= .now {
                    expired = current
                    waiter = nil
                }
                return (sends, closes, abortRequested, expired)
            }
            expired?.continuation.resume(throwing: NetworkError.timeout)
            if abort {
                ending = ending ?? .connectionLost
                setTerminal(.connectionLost)
                for send in sends { send.continuation.resume(throwing: CancellationError()) }
                return ending ?? .connectionLost
            }
            for send in sends {
                guard case .open = phase else {
                    send.continuation.resume(throwing: ending ?? NetworkError.notConnected)
                    continue
                }
                for (index, frame) in send.frames.enumerated() {
                    let last = index == send.frames.count - 1
                    outbound.append(OutFrame(bytes: frame, sendID: last ? send.id : nil,
                                             continuation: last ? send.continuation : nil, deadline: last ? send.deadline : nil))
                }
            }
            if !closes.isEmpty {
                ioCloseWaiters.append(contentsOf: closes)
                if case .open = phase {
                    startClose(code: 1000, because: .notConnected)
                }
            }

            // A send the peer has not taken in time: the connection cannot recover mid-message.
            if let firstDeadline = outbound.lazy.compactMap(\.deadline).min(), firstDeadline <= .now {
                ending = ending ?? .timeout
                setTerminal(.timeout)
                return ending ?? .timeout
            }

            // 2. Write what we can.
            var writeBlockedOnRead = false
            do {
                writing: while !outbound.isEmpty {
                    let result = try outbound[0].bytes.withUnsafeBytes { raw throws(NetworkError) in
                        try stream.write(UnsafeRawBufferPointer(rebasing: raw[outbound[0].offset...]))
                    }
                    switch result {
                    case .bytes(let count):
                        outbound[0].offset += count
                        if outbound[0].offset == outbound[0].bytes.count {
                            let done = outbound.removeFirst()
                            if let id = done.sendID { _ = lock.withLock { inflightSendIDs.remove(id) } }
                            done.continuation?.resume()
                        }
                    case .wouldBlock(let wantsWrite):
                        writeBlockedOnRead = !wantsWrite
                        break writing
                    case .end:
                        throw NetworkError.connectionLost
                    }
                }
            } catch {
                return lost(&ending)
            }
            if case .finishing = phase, outbound.isEmpty { return ending ?? .notConnected }

            // 3. Read and decode what is there (until the socket and OpenSSL are drained).
            readWantsWrite = false
            if !isInboxFull() {
                reading: while true {
                    let result: SocketStream.IOResult
                    do {
                        result = try stream.read(into: buffer)
                    } catch {
                        if case .closeSent = phase { return ending ?? .notConnected }
                        return lost(&ending)
                    }
                    switch result {
                    case .bytes(let count):
                        decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                        guard decodeFrames() else { break reading }
                        if isInboxFull() { break reading }
                    case .wouldBlock(let wantsWrite):
                        readWantsWrite = wantsWrite
                        break reading
                    case .end:
                        if case .closeSent = phase { return ending ?? .notConnected }
                        if case .finishing = phase { break reading }
                        return lost(&ending)
                    }
                }
            }
            if case .finishing = phase { continue }  // flush the close frame, then stop

            // 4. Sleep until something happens.
            var events = Int16(0)
            if !isInboxFull() || writeBlockedOnRead { events |= Int16(POLLIN) }
            if !outbound.isEmpty || readWantsWrite { events |= Int16(POLLOUT) }
            var deadline = lock.withLock { waiter?.deadline }
            if let sendDeadline = outbound.lazy.compactMap(\.deadline).min() {
                deadline = min(deadline ?? sendDeadline, sendDeadline)
            }
            if case .closeSent(let closeDeadline) = phase {
                if closeDeadline <= .now { return ending ?? .notConnected }
                deadline = min(deadline ?? closeDeadline, closeDeadline)
            }
            // With no events wanted (inbox full, nothing to write), leave the socket out: a hang-up
            // would otherwise wake poll at once, again and again, until the app reads.
            var fds = [pollfd(fd: events == 0 ? -1 : stream.fd, events: events, revents: 0),
                       pollfd(fd: signal.descriptor, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, deadline?.pollTimeoutFromNow ?? -1)
            if ready < 0 && errno != EINTR { return lost(&ending) }
            if fds[1].revents != 0 { signal.drain() }
        }
    }

    func lost(_ ending: inout NetworkError?) -> NetworkError {
        let reason = ending ?? .connectionLost
        ending = reason
        setTerminal(reason)
        return reason
    }
}
#endif
