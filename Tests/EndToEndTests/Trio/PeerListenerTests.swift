@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Security review finding 5: `/v3/peer` was a route of every trio node's public listener and escaped the
/// per-address limits and blocks, and POSTs were not counted: about 200 idle peer upgrades per second from
/// one address held all 1,024 places (every app then got 503), and each POST buffered up to 1 MiB before
/// its block and token were checked. Now node B serves the link only on its own `--peer-listen`
/// listener; peer upgrades and POSTs count against their address and honour its block before anything is
/// read; a LINK_OPEN that is not a certified A's counts as a failed authentication; an accepted link
/// stops counting (A opens one per session).
///
/// Attackers and apps are told apart by `X-Forwarded-For` from the trusted loopback proxy.
@Suite("Finding 5: the peer route and POSTs cannot starve the apps", .serialized, .heavy, .timeLimit(.minutes(30)))
struct PeerListenerTests {
    static let attacker = "X-Forwarded-For: 203.0.113.7"
    static let app = "X-Forwarded-For: 198.51.100.20"

    /// Node B with tiny limits: 4 places on each listener, 2 per address, a block after 3 failed
    /// authentications (on a clock that stands still).
    struct NodeB {
        let server: NodeServer
        let limiter: NodeRateLimiter
        let identityA: TrioNodeIdentity
        let identityB: TrioNodeIdentity
        var port: Int { server.port }
        var peerPort: Int { server.peerPort ?? 0 }

        init(connectionsPerAddress: Int = 2) throws {
            let clusterKey = Ed25519.SigningKey(), group = SecureRandom.bytes(count: 16)
            identityA = try TrioCluster.identity(.trioA, group: group, clusterKey: clusterKey)
            identityB = try TrioCluster.identity(.trioB, group: group, clusterKey: clusterKey)
            let runner = NodeStepRunner(identity: identityB, store: try TrioCluster.store(), peer: nil,
                                        replayWindow: try ReplayWindow(), tokenVerifier: NoTokenVerifier())
            let clock = ManualClock()
            limiter = NodeRateLimiter(limits: NodeRateLimits(connectionsPerAddress: connectionsPerAddress,
                                                                 failedAuthenticationsPerMinute: 3, blockSeconds: 600,
                                                                 trustedProxies: ["127.0.0.1"]),
                                          clock: clock.read)
            var config = NodeServerConfiguration(nodeKey: identityB.nodeKey, verifier: NoTokenVerifier(), maximumConnections: 4,
                                                 stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
                                                 postHandler: NodePostHandler(runner: runner), logger: .silent,
                                                 rateLimiter: limiter)
            config.trio = (identityB.certificate, identityB.clusterKey)
            // Idle sockets are the point of these tests: they must not end by the first-message deadline
            // (5 s) however long a loaded machine takes between the steps.
            config.tokenTimeout = .seconds(3600)
            config.peerListener = PeerListener(maximumConnections: 4)
            server = NodeServer(configuration: config)
            try server.start()
        }
    }

    /// A raw upgrade kept open (the descriptor) with its response head.
    static func upgrade(_ port: Int, path: String, subprotocol: String, from header: String) async throws -> (fd: Int32, head: String) {
        try await offPool {
            guard let opened = LoopbackSocket.upgrade(port: port, path: path, subprotocol: subprotocol, headers: [header], timeout: 60)
            else { throw NetworkError.connectionLost }
            return opened
        }
    }

    @Test func idlePeerSocketsCannotStarveApps() async throws {
        let node = try NodeB()
        var open: [Int32] = []
        defer { for fd in open { close(fd) } }
        // On the apps' listener /v3/peer is no route: before, these four idle links took every place.
        for _ in 0..<4 {
            let (fd, head) = try await Self.upgrade(node.port, path: "/v3/peer", subprotocol: "silentshard-peer", from: Self.attacker)
            open.append(fd)
            #expect(head.hasPrefix("HTTP/1.1 404"), "\(head)")
        }
        // On the peer listener idle links count against their address: two, then 429.
        for expected in ["HTTP/1.1 101", "HTTP/1.1 101", "HTTP/1.1 429"] {
            let (fd, head) = try await Self.upgrade(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                    from: Self.attacker)
            open.append(fd)
            #expect(head.hasPrefix(expected), "\(head)")
        }
        // An app still gets in.
        let (fd, head) = try await Self.upgrade(node.port, path: "/v3/trio/sign", subprotocol: "trio", from: Self.app)
        open.append(fd)
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        // The peer listener serves nothing but the link.
        let (appOnPeer, appOnPeerHead) = try await Self.upgrade(node.peerPort, path: "/v3/trio/sign", subprotocol: "trio",
                                                                from: Self.app)
        open.append(appOnPeer)
        #expect(appOnPeerHead.hasPrefix("HTTP/1.1 404"), "\(appOnPeerHead)")
        await node.server.stop()
    }

    @Test func linkOpensThatAreNotACertifiedAsBlockTheAddress() async throws {
        let node = try NodeB()
        // B's own certificate (a certified node, but not A) and plain junk: each refused, each counted.
        let fromB = TrioLink.preSignFinalOpenFrame(identity: node.identityB, presigID: InstanceID.random(),
                                                   algorithm: .ecdsa, token: nil, now: WallClock.milliseconds()).encoded()
        for payload in [fromB, [UInt8](repeating: 7, count: 100), fromB] {
            let (fd, head) = try await Self.upgrade(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                    from: Self.attacker)
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
            let closed = try await offPool { () -> Bool in
                LoopbackSocket.sendBinaryMessage(fd, payload)
                // The node closes the link (1008): read until the end of the stream.
                var buffer = [UInt8](repeating: 0, count: 256)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if count == 0 { return true }
                    if count < 0 { return false }
                }
            }
            close(fd)
            #expect(closed, "the refused link was not closed")
        }
        // Three failures: the address is blocked on both listeners; another address is not.
        let (blocked, blockedHead) = try await Self.upgrade(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                            from: Self.attacker)
        close(blocked)
        #expect(blockedHead.hasPrefix("HTTP/1.1 429"), "\(blockedHead)")
        let (blockedApp, blockedAppHead) = try await Self.upgrade(node.port, path: "/v3/trio/sign", subprotocol: "trio",
                                                                  from: Self.attacker)
        close(blockedApp)
        #expect(blockedAppHead.hasPrefix("HTTP/1.1 429"), "\(blockedAppHead)")
        let (other, otherHead) = try await Self.upgrade(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                        from: Self.app)
        close(other)
        #expect(otherHead.hasPrefix("HTTP/1.1 101"), "\(otherHead)")
        await node.server.stop()
    }

    /// A's links come from one address, one per session: once its LINK_OPEN is accepted a link no longer
    /// counts against the address (the count bounds unauthenticated sockets only).
    @Test func anAcceptedLinkStopsCountingAgainstItsAddress() async throws {
        let node = try NodeB(connectionsPerAddress: 1)
        let open = LINKOpenFromA(node)
        let (first, firstHead) = try await Self.upgrade(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                        from: Self.attacker)
        defer { close(first) }
        #expect(firstHead.hasPrefix("HTTP/1.1 101"), "\(firstHead)")
        // Unauthenticated, it holds the address's one place.
        let (second, secondHead) = try await Self.upgrade(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                          from: Self.attacker)
        close(second)
        #expect(secondHead.hasPrefix("HTTP/1.1 429"), "\(secondHead)")
        _ = try await offPool { LoopbackSocket.sendBinaryMessage(first, open.bytes) }
        // Accepted (B now waits for the FINAL_REQUEST on it): the place is free again. The release is queued
        // to the service thread, so try until it is seen (no timing assumption beyond a generous bound).
        let head = try await Self.upgradeOnceAccepted(node.peerPort, path: "/v3/peer", subprotocol: "silentshard-peer",
                                                      from: Self.attacker)
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        await node.server.stop()
    }

    /// A certified A's LINK_OPEN for a relayed preSignFinal.
    struct LINKOpenFromA {
        let bytes: [UInt8]
        init(_ node: NodeB) {
            bytes = TrioLink.preSignFinalOpenFrame(identity: node.identityA, presigID: InstanceID.random(),
                                                   algorithm: .ecdsa, token: nil, now: WallClock.milliseconds()).encoded()
        }
    }

    @Test func postsHoldAPlaceAndAreRefusedBeforeTheirBody() async throws {
        let node = try NodeB()
        // Two POSTs whose 1,000,000-byte bodies never come hold the address's two places...
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<2 {
            held.append(try #require(LoopbackSocket.postHead(port: node.port, path: "/v3/trio/presign-final",
                                                              contentLength: 1_000_000, headers: [Self.attacker])))
        }
        #expect(await Self.eventually { node.limiter.openConnections(from: "203.0.113.7") == 2 }, "the POSTs were not counted")
        // ... so the third is answered 429 at once, before any body byte (before, it was read up to 1 MiB).
        let third = try #require(LoopbackSocket.postHead(port: node.port, path: "/v3/trio/presign-final",
                                                         contentLength: 1_000_000, headers: [Self.attacker], timeout: 60))
        let thirdHead = try await offPool { LoopbackSocket.readHead(third) }
        close(third)
        #expect(thirdHead.hasPrefix("HTTP/1.1 429"), "\(thirdHead)")
        #expect(RateLimitServerRetryAfter.value(thirdHead) != nil, "\(thirdHead)")
        // And an upgrade from that address too: POSTs and WebSockets share the count.
        let (fd, head) = try await Self.upgrade(node.port, path: "/v3/trio/sign", subprotocol: "trio", from: Self.attacker)
        close(fd)
        #expect(head.hasPrefix("HTTP/1.1 429"), "\(head)")
        // Another address has the remaining places: one app connection and one POST, then the node is full.
        let (app, appHead) = try await Self.upgrade(node.port, path: "/v3/trio/sign", subprotocol: "trio", from: Self.app)
        held.append(app)
        #expect(appHead.hasPrefix("HTTP/1.1 101"), "\(appHead)")
        held.append(try #require(LoopbackSocket.postHead(port: node.port, path: "/v3/trio/presign-final",
                                                          contentLength: 1_000_000, headers: [Self.app])))
        #expect(await Self.eventually { node.limiter.openConnections(from: "198.51.100.20") == 2 })
        let full = try #require(LoopbackSocket.postHead(port: node.port, path: "/v3/trio/presign-final", contentLength: 10,
                                                        headers: ["X-Forwarded-For: 192.0.2.1"], timeout: 60))
        let fullHead = try await offPool { LoopbackSocket.readHead(full) }
        close(full)
        #expect(fullHead.hasPrefix("HTTP/1.1 503"), "\(fullHead)")
        // The held POSTs give their places back when they go.
        for fd in held { close(fd) }
        held = []
        let answer = try await Self.upgradeOnceAccepted(node.port, path: "/v3/trio/sign", subprotocol: "trio", from: Self.attacker)
        #expect(answer.hasPrefix("HTTP/1.1 101"), "\(answer)")
        await node.server.stop()
    }
}

extension PeerListenerTests {
    /// Upgrades (closing each socket) until one is accepted, every 50 ms for up to 30 s; the last answer's
    /// head. A released place reaches the service thread in its own time.
    static func upgradeOnceAccepted(_ port: Int, path: String, subprotocol: String, from header: String) async throws -> String {
        var head = ""
        for _ in 0..<600 {
            let (fd, answer) = try await upgrade(port, path: path, subprotocol: subprotocol, from: header)
            close(fd)
            head = answer
            if head.hasPrefix("HTTP/1.1 101") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        return head
    }

    /// Polls `condition` (every 20 ms, up to 60 s): the server's service thread applies what a socket
    /// did in its own time.
    static func eventually(_ condition: @Sendable () -> Bool) async -> Bool {
        for _ in 0..<3000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}

/// The `Retry-After` value of a response head, if any.
enum RateLimitServerRetryAfter {
    static func value(_ head: String) -> Int? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("retry-after:") }
            .flatMap { Int($0.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespaces)) }
    }
}
