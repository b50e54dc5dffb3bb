import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import CloudNode
import duo

/// Issue 34 item 3: the POST operations — the duo export POST, a presignature's FINAL_REQUEST and PRESIG_QUERY — are
/// retried by the steps' policy (`StepRetryPolicy`, session.md §10: KEY_BUSY after 25, 50, 100, 200, 400 ms, a stale
/// timestamp once with the node's time), through the one piece the steps use;
/// which retry is safe for which request is session.md §13.8 item 6. Waits go through the injected
/// `AppDeadlines.backoff` (recorded here, never slept).
@Suite("POSTs retried like steps (issue 34 item 3)", .timeLimit(.minutes(10)))
struct PostRetryTests {
    /// The key's owner, allowed every operation this suite runs.
    static let alice = Principal(subject: "alice", scopes: ["keygen", "sign", "preSign", "preSignFinal", "export"])
    static let exportRoute = NodeRoute(mode: .duo, algorithm: .eddsa, path: "", action: "export")

    /// A duo deployment whose app records its retry waits instead of sleeping, its session on `client`'s POSTs.
    struct Deployment {
        let fixture: DuoFixture
        let waits: LockedValue<[Duration]>
        let client: RefusingPostClient
        let session: DuoSession
        let keyshare: Keyshare

        init(refusals: Int, code: WireCode = .keyBusy) async throws {
            let waits = LockedValue<[Duration]>([])
            let deadlines = AppDeadlines(sleep: AppDeadlines.system.sleep,
                                         backoff: { duration in waits.withLock { $0.append(duration) } })
            fixture = try DuoFixture(algorithm: .eddsa, deadlines: deadlines)
            self.waits = waits
            let owner = LoopbackDuoClient(runner: fixture.runner, principal: PostRetryTests.alice)
            client = RefusingPostClient(inner: owner, runner: fixture.runner, code: code, refusals: refusals)
            session = fixture.session(.eddsa, signer: fixture.signer, storage: fixture.storage, client: client)
            keyshare = try await session.keygen()
        }

        /// The node's answer to an export request (what the app's backend relays).
        func exportAnswer(_ request: DuoExportRequest) async throws -> Data {
            try await NodePostHandler(runner: fixture.runner).handle(
                PostRequest(route: PostRetryTests.exportRoute, params: nil, principal: PostRetryTests.alice, body: request.body)).body
        }
    }

    static let busyWaits: [Duration] = [.milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(200),
                                        .milliseconds(400)]

    @Test("issue 34 item 3: a FINAL_REQUEST refused with KEY_BUSY is resent, the same bytes, after the steps' backoff")
    func issue34_item3_finalRequestRetriedAfterKeyBusy() async throws {
        let deployment = try await Deployment(refusals: 2)
        let presignature = try await deployment.session.preSignature(keyshare: deployment.keyshare)
        let message = Data("retried".utf8)
        let signature = try await deployment.session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(signature.rawRepresentation.count == 64)
        let bodies = deployment.client.bodies.withLock { $0 }
        #expect(bodies.count == 3, "two refusals, then the node's answer")
        #expect(Set(bodies).count == 1, "session.md §8.5: the recorded request bytes, unchanged")
        #expect(deployment.waits.withLock { $0 } == Array(Self.busyWaits.prefix(2)))
    }

    @Test("issue 34 item 3: a PRESIG_QUERY refused with KEY_BUSY is asked again (a fresh query id) after the steps' backoff")
    func issue34_item3_presignatureQueryRetriedAfterKeyBusy() async throws {
        let deployment = try await Deployment(refusals: 1)
        let presignature = try await deployment.session.preSignature(keyshare: deployment.keyshare)
        let held = try await deployment.session.reconcilePreSignatures(keyshare: deployment.keyshare)
        #expect(held.map(\.id) == [presignature.id])
        let bodies = deployment.client.bodies.withLock { $0 }
        #expect(bodies.count == 2)
        #expect(deployment.waits.withLock { $0 } == Array(Self.busyWaits.prefix(1)))
    }

    @Test("issue 34 item 3: the duo export POST refused with KEY_BUSY is rebuilt (a fresh SETUP) and relayed again")
    func issue34_item3_exportPostRetriedAfterKeyBusy() async throws {
        let deployment = try await Deployment(refusals: 0)
        let relayed = LockedValue<[DuoExportRequest]>([])
        let key = try await deployment.session.export(keyshare: deployment.keyshare) { request in
            let attempt = relayed.withLock { $0.append(request); return $0.count }
            guard attempt > 1 else { return try deployment.client.reject(request.body) }
            return try await deployment.exportAnswer(request)
        }
        #expect(key.publicKey == deployment.keyshare.publicKey)
        let requests = relayed.withLock { $0 }
        #expect(requests.count == 2)
        #expect(Set(requests.map(\.instanceID)).count == 2, "each attempt is a fresh SETUP (the replay store refuses a resend)")
        #expect(deployment.waits.withLock { $0 } == Array(Self.busyWaits.prefix(1)))
    }

    @Test("issue 34 item 3: the duo export POST refused with an authenticated STALE_TIMESTAMP is rebuilt with the node's time")
    func issue34_item3_exportPostRetriedWithTheNodesTime() async throws {
        let deployment = try await Deployment(refusals: 0)
        let nodeTime = deployment.fixture.clock.milliseconds
        let detail = (0..<8).reversed().map { UInt8(truncatingIfNeeded: nodeTime >> (8 * UInt64($0))) }
        let relayed = LockedValue<[DuoExportRequest]>([])
        let key = try await deployment.session.export(keyshare: deployment.keyshare, chainPath: "m/4") { request in
            let attempt = relayed.withLock { $0.append(request); return $0.count }
            guard attempt > 1 else { return try deployment.client.reject(request.body, code: .staleTimestamp, detail: detail) }
            return try await deployment.exportAnswer(request)
        }
        #expect(key.chainPath == "m/4")
        #expect(relayed.withLock { $0.count } == 2)
        #expect(deployment.waits.withLock { $0 }.isEmpty, "a clock correction is retried at once")
    }

    @Test("issue 34 item 3: KEY_BUSY on every attempt: five retries with the steps' waits, then keyBusy")
    func issue34_item3_busyPostGivesUpLikeAStep() async throws {
        let deployment = try await Deployment(refusals: .max)
        let presignature = try await deployment.session.preSignature(keyshare: deployment.keyshare)
        await #expect(throws: SilentShardError.keyBusy) {
            _ = try await deployment.session.preSignatureFinal(preSignature: presignature, message: Data("busy".utf8))
        }
        #expect(deployment.client.bodies.withLock { $0.count } == 1 + StepRetryPolicy.busyRetries)
        #expect(deployment.waits.withLock { $0 } == Self.busyWaits)
    }

    @Test("issue 34 item 3: a refusal the steps do not retry (PRESIG_CONSUMED) is not retried for a POST either")
    func issue34_item3_unretriedRefusalIsOneAttempt() async throws {
        let deployment = try await Deployment(refusals: 1, code: .presigConsumed)
        let presignature = try await deployment.session.preSignature(keyshare: deployment.keyshare)
        await #expect(throws: SilentShardError.presignatureConsumed) {
            _ = try await deployment.session.preSignatureFinal(preSignature: presignature, message: Data("once".utf8))
        }
        #expect(deployment.client.bodies.withLock { $0.count } == 1)
        #expect(deployment.waits.withLock { $0 }.isEmpty)
    }
}

/// A client whose first `refusals` POSTs are refused by the node with `code` (a REJECT signed by the node's key,
/// bound to the request's instance id, as the node's admission sends it) without reaching the node; everything
/// else goes to `inner`. Every POST body is recorded.
final class RefusingPostClient: NetworkClient, @unchecked Sendable {
    let inner: any NetworkClient
    let runner: NodeStepRunner
    let code: WireCode
    let refusals: LockedValue<Int>
    let bodies = LockedValue<[Data]>([])

    init(inner: any NetworkClient, runner: NodeStepRunner, code: WireCode, refusals: Int) {
        self.inner = inner
        self.runner = runner
        self.code = code
        self.refusals = LockedValue(refusals)
    }

    func connect(action: NetworkAction, params: String?) async throws { try await inner.connect(action: action, params: params) }
    func send(bytes: Data) async throws { try await inner.send(bytes: bytes) }
    func send(text: String) async throws { try await inner.send(text: text) }
    func read() async throws -> Data { try await inner.read() }
    func disconnect() async throws { try await inner.disconnect() }
    func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        bodies.withLock { $0.append(body) }
        let refused = refusals.withLock { remaining -> Bool in
            guard remaining > 0 else { return false }
            remaining -= 1
            return true
        }
        if refused { return try reject(body) }
        return try await inner.sendPostRequest(action: action, params: params, body: body)
    }

    /// The node's signed REJECT with `code` (this client's by default) of the request `body` (bound to its instance
    /// id; an export SETUP's REJECT also to its setup hash).
    func reject(_ body: Data, code: WireCode? = nil, detail: [UInt8] = []) throws -> Data {
        let bytes = [UInt8](body)
        let header = try FrameHeader.decode(Array(bytes.prefix(FrameHeader.byteCount)))
        let setupHash = header.kind == .setup
            ? SessionHash.setupHash(headerAndPayload: try Frame.parseSingle(bytes).headerAndPayload) : nil
        return Data(runner.rejectFrame(SetupRejection(code ?? self.code, detail: detail), instanceID: header.instanceID,
                                       setupHash: setupHash).encoded())
    }
}
