import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import CloudNode
import duo

/// The audit of issue 34 item 3 (the POSTs' retry, session.md §13.8 item 6): only what the SDK parsed and
/// authenticated drives `StepRetryPolicy` (L1, L4), a cancelled task stops retrying (L2), and the node's own
/// lease (KEY_BUSY) does not count against the client (L3).
@Suite("POST retry audit (issue 34 item 3)", .timeLimit(.minutes(10)))
struct PostRetryAuditTests {
    /// A duo deployment (as `PostRetryTests.Deployment`) whose retry waits run `backoff` (recorded first).
    struct Deployment {
        let fixture: DuoFixture
        let waits: LockedValue<[Duration]>
        let client: RefusingPostClient
        let session: DuoSession
        let keyshare: Keyshare

        init(backoff: @escaping @Sendable (Duration) async throws -> Void = { _ in }) async throws {
            let waits = LockedValue<[Duration]>([])
            let deadlines = AppDeadlines(sleep: AppDeadlines.system.sleep, backoff: { duration in
                waits.withLock { $0.append(duration) }
                try await backoff(duration)
            })
            fixture = try DuoFixture(algorithm: .eddsa, deadlines: deadlines)
            self.waits = waits
            let owner = LoopbackDuoClient(runner: fixture.runner, principal: PostRetryTests.alice)
            client = RefusingPostClient(inner: owner, runner: fixture.runner, code: .keyBusy, refusals: 0)
            session = fixture.session(.eddsa, signer: fixture.signer, storage: fixture.storage, client: client)
            keyshare = try await session.keygen()
        }

        /// The SETUP timestamp (ms) of a fresh export request: what the session's clock reads now.
        func sessionClockMilliseconds(of other: DuoSession? = nil) async throws -> UInt64 {
            let request = try await (other ?? session).exportRequest(keyshare: keyshare)
            return try SetupPayload(bytes: Frame.parseSingle([UInt8](request.body)).body).timestamp
        }

        /// The node's REJECT with `code` of an export request, signed by the node but bound to neither the request's
        /// setup hash (a zero setup hash) — what a replayed or forged refusal looks like (session.md §4.5).
        func unboundReject(_ request: DuoExportRequest, code: WireCode, detail: [UInt8] = []) throws -> Data {
            let header = try FrameHeader.decode(Array([UInt8](request.body).prefix(FrameHeader.byteCount)))
            return Data(fixture.runner.rejectFrame(SetupRejection(code, detail: detail), instanceID: header.instanceID,
                                                   setupHash: nil).encoded())
        }
    }

    @Test("audit L1: a clockSkew thrown by the export relay (not an authenticated REJECT) does not move the clock")
    func auditL1_relayThrownClockSkewDoesNotMoveTheClock() async throws {
        let deployment = try await Deployment()
        let before = try await deployment.sessionClockMilliseconds()
        let calls = LockedValue(0)
        await #expect(throws: SilentShardError.clockSkew(nodeTime: nil)) {
            _ = try await deployment.session.export(keyshare: deployment.keyshare) { request in
                calls.withLock { $0 += 1 }
                throw SilentShardError.clockSkew(nodeTime: 0)
            }
        }
        #expect(calls.withLock { $0 } == 1, "not retried: the SDK authenticated nothing")
        let after = try await deployment.sessionClockMilliseconds()
        #expect(after >= before && after - before < 60_000, "the session clock is the device's, not the relay's 0")
        #expect(deployment.waits.withLock { $0 }.isEmpty)
    }

    @Test("audit L1: a keyBusy thrown by the export relay is not retried")
    func auditL1_relayThrownKeyBusyIsNotRetried() async throws {
        let deployment = try await Deployment()
        let calls = LockedValue(0)
        await #expect(throws: SilentShardError.network(.connectionFailed(reason: "transport error"))) {
            _ = try await deployment.session.export(keyshare: deployment.keyshare) { request in
                calls.withLock { $0 += 1 }
                throw SilentShardError.keyBusy
            }
        }
        #expect(calls.withLock { $0 } == 1)
        #expect(deployment.waits.withLock { $0 }.isEmpty, "no backoff: nothing to retry")
    }

    @Test("audit L1: a step's custom transport throwing clockSkew or keyBusy is not retried and moves no clock")
    func auditL1_transportThrownRefusalDoesNotDriveAStepsRetry() async throws {
        let deployment = try await Deployment()
        for thrown in [SilentShardError.clockSkew(nodeTime: 0), .keyBusy] {
            let client = ThrowingConnectClient(inner: deployment.client, error: thrown)
            let session = deployment.fixture.session(.eddsa, signer: deployment.fixture.signer,
                                                     storage: deployment.fixture.storage, client: client)
            let before = try await deployment.sessionClockMilliseconds(of: session)
            await #expect(throws: SilentShardError.self) { _ = try await session.keygen() }
            #expect(client.connects.withLock { $0 } == 1, "\(thrown): one attempt")
            let after = try await deployment.sessionClockMilliseconds(of: session)
            #expect(after >= before && after - before < 60_000, "\(thrown): the clock did not move")
        }
        #expect(deployment.waits.withLock { $0 }.isEmpty)
    }

    @Test("audit L2: a task cancelled during the KEY_BUSY backoff makes no further attempt and ends cancelled")
    func auditL2_cancelledDuringBackoffStopsRetrying() async throws {
        let deployment = try await Deployment(backoff: { _ in throw CancellationError() })
        let calls = LockedValue(0)
        await #expect(throws: SilentShardError.cancelled) {
            _ = try await deployment.session.export(keyshare: deployment.keyshare) { request in
                calls.withLock { $0 += 1 }
                return try deployment.client.reject(request.body)  // signed, bound: an authenticated KEY_BUSY
            }
        }
        #expect(calls.withLock { $0 } == 1, "no re-POST (each would sign a new SETUP with the device key)")
        #expect(deployment.waits.withLock { $0 }.count == 1)
    }

    @Test("audit L3: KEY_BUSY (the node's own lease) does not count against the client; a bad request still does")
    func auditL3_keyBusyIsNotCountedAgainstTheClient() {
        #expect(!NodeRateLimiter.countsAgainstClient(.keyBusy))
        #expect(NodeRateLimiter.countsAgainstClient(.replay))
        #expect(NodeRateLimiter.countsAgainstClient(.staleTimestamp))
    }

    @Test("audit L4: a KEY_BUSY or STALE_TIMESTAMP REJECT not bound to this setup hash is reported once, not retried")
    func auditL4_unauthenticatedRefusalIsNotRetried() async throws {
        let deployment = try await Deployment()
        let nodeTime: UInt64 = 1_000
        let detail = (0..<8).reversed().map { UInt8(truncatingIfNeeded: nodeTime >> (8 * UInt64($0))) }
        for (code, detail) in [(WireCode.keyBusy, [UInt8]()), (.staleTimestamp, detail)] {
            let before = try await deployment.sessionClockMilliseconds()
            let calls = LockedValue(0)
            do {
                _ = try await deployment.session.export(keyshare: deployment.keyshare) { request in
                    calls.withLock { $0 += 1 }
                    return try deployment.unboundReject(request, code: code, detail: detail)
                }
                Issue.record("an unauthenticated \(code.name) ended in a key")
            } catch {
                guard case .rejected(let raw, _, .node(1), authenticated: false) = error, raw == code.rawValue else {
                    Issue.record("\(code.name): \(error)")
                    continue
                }
            }
            #expect(calls.withLock { $0 } == 1, "\(code.name): one attempt")
            let after = try await deployment.sessionClockMilliseconds()
            #expect(after >= before && after - before < 60_000, "\(code.name): the clock did not move")
        }
        #expect(deployment.waits.withLock { $0 }.isEmpty)
    }
}

/// A transport (an app's own `NetworkClient`) whose `connect` throws `error` — a `SilentShardError` the SDK never
/// parsed nor authenticated; every connect is counted.
final class ThrowingConnectClient: NetworkClient, @unchecked Sendable {
    let inner: any NetworkClient
    let error: SilentShardError
    let connects = LockedValue(0)

    init(inner: any NetworkClient, error: SilentShardError) {
        self.inner = inner
        self.error = error
    }

    func connect(action: NetworkAction, params: String?) async throws {
        connects.withLock { $0 += 1 }
        throw error
    }
    func send(bytes: Data) async throws { try await inner.send(bytes: bytes) }
    func send(text: String) async throws { try await inner.send(text: text) }
    func read() async throws -> Data { try await inner.read() }
    func disconnect() async throws { try await inner.disconnect() }
    func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        try await inner.sendPostRequest(action: action, params: params, body: body)
    }
}
