import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
@testable import CloudNode
import duo
import trio

/// Security review 2, findings 4, 6, 7 and 9 at the node: what a refused request costs (writes, audit
/// lines), the session.md §9.5 limits on refusals, one device-signature rule for every request kind, and
/// "not yours" answered like "not here" (duo's node); a FINAL_REQUEST for trio's B is authorized (scope, the
/// session.md §9.5 limit of refused requests) at A before A opens a link to B.
@Suite("Node refusal paths (security review 2, findings 4, 6, 7, 9)", .heavy, .timeLimit(.minutes(30)))
struct RefusalFindingsTests {
    static let alice = Principal(subject: "alice")
    static let mallory = Principal(subject: "mallory")

    /// A FINAL_REQUEST frame for presignature `id` (its sealed part is junk: nothing gets that far).
    static func finalRequest(id: InstanceID, receiver: PartyIndex = 1) -> [UInt8] { NodeAnswers.junkFinalRequest(id: id, receiver: receiver) }

    /// The REJECT code of a node's answer (nil: not a REJECT).
    static func rejectCode(_ answer: [UInt8]?) -> WireCode? { NodeAnswers.rejectCode(answer) }

    static func retryAfter(_ answer: [UInt8]?) -> UInt32? {
        guard let answer, let frame = try? Frame.parseSingle(answer), frame.header.kind == .reject,
              let payload = try? RejectPayload(bytes: frame.body), payload.code == .rateLimited
        else { return nil }
        return payload.retryAfterSeconds
    }

    static let exportRoute = NodeRoute(mode: .duo, algorithm: .ecdsa, path: "", action: "export")
    static let finalRoute = NodeRoute(mode: .duo, algorithm: .ecdsa, path: "", action: "presign-final")
    static let backend = Principal(subject: "backend", scopes: ["export"])

    static func rows(_ store: NodeShareStore, _ table: String) throws -> Int64 {
        try store.replayDatabase.read { db throws(NodeStoreError) in try db.first("SELECT count(*) FROM \(table)", [])?.integer(0) ?? 0 }
    }

    static func auditLines(_ store: NodeShareStore) throws -> Int { try store.auditLog(limit: 1_000_000).count }

    // MARK: Finding 4

    @Test("finding 4: a preSignFinal POST for an unknown presignature, and an export SETUP for an unknown key, write nothing")
    func finding4_refusedPostWritesNothing() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let handler = NodePostHandler(runner: fixture.runner)
        let (writes, lines, instances) = (fixture.store.writeTransactionCount, try Self.auditLines(fixture.store),
                                          try Self.rows(fixture.store, "seen_instances"))
        let answer = try await handler.handle(PostRequest(route: Self.finalRoute, params: nil, principal: Self.alice,
                                                          body: Data(Self.finalRequest(id: .random()))))
        #expect(Self.rejectCode([UInt8](answer.body)) == .presigNotFound)
        #expect(fixture.store.writeTransactionCount - writes == 0, "write transactions for one refused FINAL_REQUEST")
        #expect(try Self.auditLines(fixture.store) - lines == 0, "audit lines for one refused FINAL_REQUEST")

        // An export SETUP signed by a device key of the caller's own, for another subject's key.
        let stranger = fixture.session(.ecdsa)
        let request = try await stranger.exportRequest(keyshare: keyshare)
        let refused = try await handler.handle(PostRequest(route: Self.exportRoute, params: nil, principal: Self.backend,
                                                           body: request.body))
        #expect(Self.rejectCode([UInt8](refused.body)) == .keyNotFound)
        #expect(fixture.store.writeTransactionCount - writes == 0, "write transactions for one refused export")
        #expect(try Self.auditLines(fixture.store) - lines == 0, "audit lines for one refused export")
        #expect(try Self.rows(fixture.store, "seen_instances") == instances, "replay rows for one refused export")
    }

    @Test("finding 4: refused FINAL_REQUESTs, PRESIG_QUERYs and exports count per principal and per address; past the limit, RATE_LIMITED with no write",
          arguments: [false, true])
    func finding4_postFailuresAreRateLimited(inTheDatabase: Bool) async throws {
        let clock = ManualClock()
        let probe = try DuoFixture(algorithm: .ecdsa, clock: clock)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedRequestsPerMinute: 3), clock: clock.read,
                                      cluster: inTheDatabase ? ClusterRateLimits(store: probe.store, clock: clock.read) : nil)
        let runner = NodeStepRunner(nodeKey: probe.nodeKey, store: probe.store, replayWindow: try ReplayWindow(),
                                    clock: clock.read, rateLimiter: limiter)
        let fixture = (store: probe.store, runner: runner)
        let session = probe.session(.ecdsa, client: LoopbackClient(mode: .duo, runner: runner))
        let keyshare = try await session.keygen()
        let handler = NodePostHandler(runner: fixture.runner)
        func final(_ principal: Principal, _ address: String) async throws -> [UInt8] {
            [UInt8](try await handler.handle(PostRequest(route: Self.finalRoute, params: nil, principal: principal,
                                                         body: Data(Self.finalRequest(id: .random())),
                                                         clientAddress: address)).body)
        }
        for _ in 0..<3 { #expect(Self.rejectCode(try await final(Self.alice, "192.0.2.1")) == .presigNotFound) }
        let writes = fixture.store.writeTransactionCount, rateRows = try fixture.store.rateRowCount()
        let limited = try await final(Self.alice, "192.0.2.9")
        #expect(Self.retryAfter(limited).map { (1...60).contains($0) } == true, "alice after 3 refusals")
        // The address too: another principal there is refused, and another principal elsewhere served.
        #expect(Self.rejectCode(try await final(Self.mallory, "192.0.2.1")) == .rateLimited)
        #expect(Self.rejectCode(try await final(Self.mallory, "198.51.100.2")) == .presigNotFound)
        // PRESIG_QUERY and export of the limited principal are refused alike.
        let query = PresignatureQueryPayload(keyID: keyshare.keyID, ids: [.random()]).frame(signer: 1, instanceID: .random())
        let queried = await fixture.runner.preSignFinal(body: query.encoded(), token: nil, principal: Self.alice,
                                                        clientAddress: "203.0.113.5")
        #expect(Self.rejectCode(queried) == .rateLimited)
        // An export of the limited principal: refused before its SETUP is even verified.
        let export = try await session.exportRequest(keyshare: keyshare)
        let exported = try await handler.handle(PostRequest(route: Self.exportRoute, params: nil, principal: Self.alice,
                                                            body: export.body, clientAddress: "203.0.113.6"))
        #expect(Self.rejectCode([UInt8](exported.body)) == .rateLimited)
        #expect(fixture.store.writeTransactionCount == writes)
        // In the database: mallory's one refusal elsewhere (2 rows: principal, address), nothing for the limited ones.
        #expect(try fixture.store.rateRowCount() - rateRows == (inTheDatabase ? 2 : 0))
        // A minute later, alice is served again.
        clock.advance(seconds: 61)
        #expect(Self.rejectCode(try await final(Self.alice, "192.0.2.1")) == .presigNotFound)
    }

    @Test("finding 4: audit lines older than the retention are purged, newer ones kept")
    func finding4_auditLogRetention() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        _ = try await fixture.session.keygen()
        let old = try Self.auditLines(fixture.store)
        #expect(old > 0)
        fixture.clock.advance(seconds: 91 * 24 * 3600)
        try fixture.store.ban(deviceKey: [1, 2, 3], reason: "test", instanceId: [UInt8](repeating: 0, count: 32), party: "node")
        // In batches of 1 (one short transaction per line): all of them, and nothing newer.
        #expect(try fixture.store.purgeAuditLog(olderThan: NodeShareStore.defaultAuditRetention, batch: 1) == old)
        #expect(try fixture.store.auditLog().map(\.operation) == ["ban"])
        #expect(try fixture.store.purgeAuditLog(olderThan: 0) == 0)
    }

    @Test("finding 4: A refuses a FINAL_REQUEST for B without the scope, or past the refusal limit, before opening a link")
    func finding4_aRefusesBeforeLinking() async throws {
        let clock = ManualClock()
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedRequestsPerMinute: 1), clock: clock.read)
        let fixture = try TrioFixture(algorithm: .ecdsa, rateLimiterA: limiter, clock: clock)
        let noScope = Principal(subject: "alice", scopes: ["sign"])
        let refused = await fixture.runnerA.preSignFinal(body: Self.finalRequest(id: .random(), receiver: 2), token: nil,
                                                         principal: noScope, clientAddress: "192.0.2.7")
        #expect(Self.rejectCode(refused) == .forbidden)
        #expect(await fixture.peer.reports().count == 0, "links A opened to B for a request it could refuse itself")

        // Refused by B (an id B never had) counts at A; the next one is refused at A with no link.
        let bob = Principal(subject: "bob")
        let first = await fixture.runnerA.preSignFinal(body: Self.finalRequest(id: .random(), receiver: 2), token: nil,
                                                       principal: bob, clientAddress: "198.51.100.7")
        #expect(Self.rejectCode(first) == .presigNotFound)
        let links = await fixture.peer.reports().count
        #expect(links == 1)
        let limited = await fixture.runnerA.preSignFinal(body: Self.finalRequest(id: .random(), receiver: 2), token: nil,
                                                         principal: bob, clientAddress: "198.51.100.8")
        #expect(Self.rejectCode(limited) == .rateLimited)
        #expect(await fixture.peer.reports().count == links, "a link opened for a limited principal")
    }

    // MARK: Finding 6

    @Test("finding 6: N bad-signature export POSTs lock the (principal, device) out as N bad WebSocket SETUPs do")
    func finding6_exportPostCountsBadSignatures() async throws {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 2))
        let fixture = try DuoFixture(algorithm: .ecdsa, rateLimiter: limiter)
        let keyshare = try await fixture.session.keygen()
        let handler = NodePostHandler(runner: fixture.runner)
        let device = try DeviceKey(signer: fixture.signer).identity
        for attempt in 0..<2 {
            #expect(limiter.checkDevice(device, principal: Self.backend.rateLimitKey) == .allowed, "before bad POST \(attempt)")
            var body = [UInt8](try await fixture.session.exportRequest(keyshare: keyshare).body)
            body[body.count - 1] ^= 0x80   // the device signature of the SETUP
            let answer = try await handler.handle(PostRequest(route: Self.exportRoute, params: nil, principal: Self.backend,
                                                              body: Data(body)))
            #expect(Self.rejectCode([UInt8](answer.body)) == .deviceSignatureInvalid)
        }
        #expect(limiter.checkDevice(device, principal: Self.backend.rateLimitKey) != .allowed)
        // Now even a well-signed export of that device is refused, as a WebSocket step would be.
        let good = try await fixture.session.exportRequest(keyshare: keyshare)
        let answer = try await handler.handle(PostRequest(route: Self.exportRoute, params: nil, principal: Self.backend,
                                                          body: good.body))
        #expect(Self.retryAfter([UInt8](answer.body)).map { (1...60).contains($0) } == true)
    }

    // MARK: Finding 7

    @Test("finding 7: a limited (principal, device) is refused before its signature is checked, and nothing is written")
    func finding7_limitedDeviceIsNotVerifiedOrWritten() async throws {
        let clock = ManualClock()
        let corrupt = LockedValue(false)
        let tamper: @Sendable (Int, Data) -> Data = { index, data in
            guard index == 0, corrupt.withLock({ $0 }) else { return data }
            var bytes = [UInt8](data)
            bytes[bytes.count - 1] ^= 0x80
            return Data(bytes)
        }
        let probe = try DuoFixture(algorithm: .ecdsa, clock: clock)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 2), clock: clock.read,
                                      cluster: ClusterRateLimits(store: probe.store, clock: clock.read))
        let runner = NodeStepRunner(nodeKey: probe.nodeKey, store: probe.store, replayWindow: try ReplayWindow(),
                                    clock: clock.read, rateLimiter: limiter)
        let client = LoopbackClient(mode: .duo, runner: runner, tamperSend: tamper, principal: Self.alice)
        let session = probe.session(.ecdsa, signer: probe.signer, storage: probe.storage, client: client)
        let keyshare = try await session.keygen()
        corrupt.withLock { $0 = true }
        let message = Data(repeating: 3, count: 32)
        for _ in 0..<2 {
            await #expect(throws: SilentShardError.authenticationFailed(reason: "device signature")) {
                _ = try await session.signature(keyshare: keyshare, message: message)
            }
        }
        let rows = try probe.store.rateRowCount()
        for _ in 0..<3 {
            do {
                _ = try await session.signature(keyshare: keyshare, message: message)
                Issue.record("a bad SETUP of a limited device was served")
            } catch {
                guard case .rateLimited = error as? SilentShardError else {
                    Issue.record("a bad SETUP of a limited device: \(error), not RATE_LIMITED")
                    continue
                }
            }
        }
        #expect(try probe.store.rateRowCount() == rows, "rate rows written for SETUPs of a limited device")
    }

    @Test("finding 7: failed device signatures are capped per principal and per address across device keys")
    func finding7_failuresCappedAcrossDeviceKeys() async throws {
        let clock = ManualClock()
        let fixture = try DuoFixture(algorithm: .ecdsa, clock: clock)
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 5, failedRequestsPerMinute: 3),
                                      clock: clock.read)
        let runner = NodeStepRunner(nodeKey: fixture.nodeKey, store: fixture.store, replayWindow: try ReplayWindow(),
                                    clock: clock.read, rateLimiter: limiter)
        let corrupt: @Sendable (Int, Data) -> Data = { index, data in
            guard index == 0 else { return data }
            var bytes = [UInt8](data)
            bytes[bytes.count - 1] ^= 0x80
            return Data(bytes)
        }
        func attempt(_ principal: Principal?, _ address: String?, bad: Bool) async -> SilentShardError? {
            // A fresh random device key every time.
            let untouched: @Sendable (Int, Data) -> Data = { $1 }
            let client = LoopbackClient(mode: .duo, runner: runner, tamperSend: bad ? corrupt : untouched, principal: principal,
                                           clientAddress: address)
            let session = fixture.session(.ecdsa, signer: SoftwareEd25519MessageSigner(), client: client)
            do { _ = try await session.keygen() } catch { return error as? SilentShardError }
            return nil
        }
        // Per principal: three device keys, then a fourth (well signed) is refused.
        for _ in 0..<3 {
            #expect(await attempt(Self.mallory, nil, bad: true) == .authenticationFailed(reason: "device signature"))
        }
        guard case .rateLimited? = await attempt(Self.mallory, nil, bad: false) else {
            Issue.record("a principal rotating device keys was not limited")
            return
        }
        #expect(await attempt(Self.alice, nil, bad: false) == nil)
        // Per address: principals of a shared subject (no subject of their own) from one address.
        let shared = Principal(subject: "token-file", identifiesSubject: false)
        for _ in 0..<3 {
            #expect(await attempt(shared, "192.0.2.44", bad: true) == .authenticationFailed(reason: "device signature"))
        }
        guard case .rateLimited? = await attempt(Self.alice, "192.0.2.44", bad: false) else {
            Issue.record("an address rotating device keys was not limited")
            return
        }
        #expect(await attempt(shared, "192.0.2.45", bad: false) == nil)
    }

    // MARK: Finding 9

    /// The fixture's node key over an empty store: "not here" for every id, to compare with "not yours".
    static func emptyTwin(_ fixture: DuoFixture) throws -> NodeStepRunner {
        let directory = NSTemporaryDirectory() + "silentshard-duo-twin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random(), clock: fixture.clock.date)
        return NodeStepRunner(nodeKey: fixture.nodeKey, store: store, replayWindow: try ReplayWindow(), clock: fixture.clock.read)
    }

    @Test("finding 9: PRESIG_QUERY and FINAL_REQUEST on another subject's key or presignature answer byte for byte like an unknown one")
    func finding9_presignatureAnswersAlike() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let twin = try Self.emptyTwin(fixture)
        let keyshare = try await fixture.session.keygen()   // owned by `anonymous` (no verifier)
        let held = try await fixture.session.preSignature(keyshare: keyshare)
        let consumed = try await fixture.session.preSignature(keyshare: keyshare)
        _ = try await fixture.session.preSignatureFinal(preSignature: consumed, message: Data(repeating: 1, count: 32))
        let expiring = try await fixture.session.preSignature(keyshare: keyshare, ttl: 60)
        fixture.clock.advance(seconds: 120)   // `expiring` has expired (its row stays until a purge)

        var ids: [InstanceID] = []
        for presignature in [held, consumed, expiring] { ids.append(try #require(InstanceID([UInt8](presignature.id)))) }
        let query = PresignatureQueryPayload(keyID: keyshare.keyID, ids: ids + [.random()])
            .frame(signer: 1, instanceID: .random()).encoded()
        let notYours = await fixture.runner.preSignFinal(body: query, token: nil, principal: Self.mallory)
        let notHere = await twin.preSignFinal(body: query, token: nil, principal: Self.mallory)
        #expect(notYours != nil && notYours == notHere, "PRESIG_QUERY: another subject's key vs a key not held")

        for (name, id) in zip(["held", "consumed", "expired"], ids) {
            let body = Self.finalRequest(id: id)
            let notYours = await fixture.runner.preSignFinal(body: body, token: nil, principal: Self.mallory)
            let notHere = await twin.preSignFinal(body: body, token: nil, principal: Self.mallory)
            #expect(notYours != nil && notYours == notHere, "FINAL_REQUEST on another subject's \(name) presignature")
            #expect(Self.rejectCode(notYours) == .presigNotFound, "\(name)")
        }
        // The owner still learns the state of its own.
        #expect(Self.rejectCode(await fixture.runner.preSignFinal(body: Self.finalRequest(id: ids[1]), token: nil,
                                                                  principal: nil)) == .presigConsumed)
        #expect(Self.rejectCode(await fixture.runner.preSignFinal(body: Self.finalRequest(id: ids[2]), token: nil,
                                                                  principal: nil)) == .presigExpired)
        #expect(try fixture.store.presignatureCount(keyId: keyshare.keyId) >= 1)
    }

    @Test("finding 9: a SETUP on another subject's key id is refused like one on a key id this node does not hold")
    func finding9_setupAnswersAlike() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let twin = try Self.emptyTwin(fixture)
        let keyshare = try await fixture.session.keygen()   // owned by `anonymous`
        let message = Data(repeating: 9, count: 32)
        func sign(_ runner: NodeStepRunner) async -> (SilentShardError?, [NodeStepReport]) {
            let client = LoopbackClient(mode: .duo, runner: runner, principal: Self.mallory)
            let session = fixture.session(.ecdsa, signer: fixture.signer, storage: fixture.storage, client: client)
            var failure: SilentShardError?
            do { _ = try await session.signature(keyshare: keyshare, message: message) } catch { failure = error as? SilentShardError }
            return (failure, client.reports)
        }
        let (notYours, yoursReports) = await sign(fixture.runner)
        let (notHere, hereReports) = await sign(twin)
        #expect(notYours != nil && notYours == notHere, "\(String(describing: notYours)) vs \(String(describing: notHere))")
        #expect(yoursReports == [.rejected(.keyNotFound)] && hereReports == yoursReports)
    }
}
