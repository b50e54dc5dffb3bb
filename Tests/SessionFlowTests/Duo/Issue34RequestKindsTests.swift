import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
@testable import CloudNode
import duo

/// Issue 34 item 3: one admission for every request kind at the duo node — WebSocket SETUPs (sign, preSign), the
/// export POST, FINAL_REQUEST and PRESIG_QUERY run the same stages, so each one (a) counts a failed
/// authentication of the request in the session.md §9.5 windows, (b) refuses a device this process banned with
/// BANNED, and (c) a refused unauthenticated request writes nothing to the node's database.
@Suite("Duo node: every request kind through one admission (issue 34 item 3)", .heavy, .timeLimit(.minutes(20)))
struct Issue34RequestKindsTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case setupSign, setupPreSign, exportPost, finalRequest, presigQuery
        var testDescription: String { rawValue }
        /// Whether the request names a device key (PRESIG_QUERY names none: only its token speaks for it).
        var hasDevice: Bool { self != .presigQuery }
    }

    /// The key's owner, allowed every operation this suite runs (export only when granted explicitly).
    static let alice = Principal(subject: "alice", scopes: ["keygen", "sign", "preSign", "preSignFinal", "export"])
    static let exportRoute = NodeRoute(mode: .duo, algorithm: .eddsa, path: "", action: "export")

    /// Flips the last byte of the SETUP (its device signature) in the app's first message, whose early
    /// broadcast frames (EdDSA's round 1) may follow it.
    static let corruptSetup: @Sendable (Int, Data) -> Data = { index, data in
        guard index == 0, let setup = (try? Frame.parseBundle([UInt8](data)))?.first else { return data }
        var bytes = [UInt8](data)
        bytes[setup.encoded().count - 1] ^= 0x80
        return Data(bytes)
    }

    /// One request of `kind` from `principal` at `runner`: its REJECT code (nil: served).
    static func request(_ kind: Kind, runner: NodeStepRunner, fixture: DuoFixture, keyshare: Keyshare,
                        presignature: InstanceID, principal: Principal, badAuthentication: Bool) async throws -> WireCode? {
        switch kind {
        case .setupSign, .setupPreSign:
            let untouched: @Sendable (Int, Data) -> Data = { $1 }
            let client = LoopbackDuoClient(runner: runner, tamperSend: badAuthentication ? corruptSetup : untouched,
                                           principal: principal)
            let session = fixture.session(.eddsa, signer: fixture.signer, storage: fixture.storage, client: client)
            do {
                if kind == .setupSign {
                    _ = try await session.signature(keyshare: keyshare, message: Data(repeating: 5, count: 32))
                } else {
                    _ = try await session.preSignature(keyshare: keyshare)
                }
            } catch {}
            guard case .rejected(let code)? = client.reports.last else { return nil }
            return code
        case .exportPost:
            var body = [UInt8](try await fixture.session.exportRequest(keyshare: keyshare).body)
            if badAuthentication { body[body.count - 1] ^= 0x80 }
            let answer = try await NodePostHandler(runner: runner).handle(
                PostRequest(route: exportRoute, params: nil, principal: principal, body: Data(body)))
            return NodeAnswers.rejectCode([UInt8](answer.body))
        case .finalRequest:
            // A junk authenticator: only a request sealed with the presignature's kf would be good.
            precondition(badAuthentication, "a good FINAL_REQUEST is the app's (preSignatureFinal)")
            return NodeAnswers.rejectCode(await runner.preSignFinal(body: NodeAnswers.junkFinalRequest(id: presignature),
                                                                    token: nil, principal: principal, algorithm: .eddsa))
        case .presigQuery:
            // No authenticator in the frame: the token is its authentication (without the scope: refused).
            let asker = badAuthentication ? Principal(subject: principal.subject, scopes: ["sign"]) : principal
            let query = PresignatureQueryPayload(keyID: keyshare.keyID, ids: [presignature]).frame(signer: 1, instanceID: .random())
            return NodeAnswers.rejectCode(await runner.preSignFinal(body: query.encoded(), token: nil, principal: asker,
                                                                    algorithm: .eddsa))
        }
    }

    @Test("issue 34 item 3: every request kind counts a failed authentication, refuses a banned device with BANNED, and a refused unauthenticated request writes nothing",
          arguments: Kind.allCases)
    func issue34_item3_everyRequestKindCountsFailuresAndRefusesBans(kind: Kind) async throws {
        let clock = ManualClock()
        let fixture = try DuoFixture(algorithm: .eddsa, clock: clock)
        let owner = LoopbackDuoClient(runner: fixture.runner, principal: Self.alice)
        let session = fixture.session(.eddsa, signer: fixture.signer, storage: fixture.storage, client: owner)
        let keyshare = try await session.keygen()
        let presignature = try #require(InstanceID([UInt8](try await session.preSignature(keyshare: keyshare).id)))
        let device = try DeviceKey(signer: fixture.signer).identity

        // (a) and (c): another process of the node (same store) with one failure allowed per window.
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 1, failedRequestsPerMinute: 1),
                                      clock: clock.read)
        let counting = NodeStepRunner(nodeKey: fixture.nodeKey, store: fixture.store, replayWindow: try ReplayWindow(),
                                      clock: clock.read, rateLimiter: limiter)
        let (writes, lines) = (fixture.store.writeTransactionCount, try fixture.store.auditLog(limit: 1_000_000).count)
        let refused = try await Self.request(kind, runner: counting, fixture: fixture, keyshare: keyshare,
                                             presignature: presignature, principal: Self.alice, badAuthentication: true)
        let expected: WireCode = switch kind {
        case .setupSign, .setupPreSign, .exportPost: .deviceSignatureInvalid
        case .finalRequest: .badAuthenticator
        case .presigQuery: .forbidden
        }
        #expect(refused == expected)
        #expect(await limiter.checkRequestFailures(principal: Self.alice, address: nil) != .allowed,
                "(a) the refusal window of the principal")
        if kind.hasDevice {
            #expect(limiter.checkDevice(device, principal: Self.alice.rateLimitKey) != .allowed,
                    "(a) the failure window of (principal, device key)")
        }
        #expect(fixture.store.writeTransactionCount == writes, "(c) write transactions for a refused unauthenticated request")
        #expect(try fixture.store.auditLog(limit: 1_000_000).count == lines, "(c) audit lines")

        // (b) A device this process banned (its store write failing: the ban is in the process's ledger only).
        #expect(await fixture.runner.bans.ban(device, log: { _ in }, write: { throw CancellationError() }) == false)
        let banned = try await Self.request(kind, runner: fixture.runner, fixture: fixture, keyshare: keyshare,
                                            presignature: presignature, principal: Self.alice,
                                            badAuthentication: kind == .finalRequest)
        if kind.hasDevice {
            #expect(banned == .banned, "(b) a banned device's \(kind)")
        } else {
            // session.md §8.6, §9.4: after a ban the app asks which presignatures are left; the query names no device.
            #expect(banned == nil, "(b) PRESIG_QUERY is answered for a banned device, like reconcile")
        }
    }
    @Test("issue 34 item 3: the stages each request kind runs, in order, from the one place that chooses them")
    func issue34_item3_stagesPerRequestKind() throws {
        let runner = try DuoFixture(algorithm: .eddsa).runner
        let validation = ["limits before verifying", "count device-signature failures", "validate"]
        #expect(AdmissionPlans.webSocketSetup(.sign, at: runner).names
                == validation + ["durable replay", "authorize", "rate limits", "ban", "key state"])
        #expect(AdmissionPlans.webSocketSetup(.refresh, at: runner).names
                == validation + ["durable replay", "authorize", "lease", "ban", "key state"])
        #expect(AdmissionPlans.webSocketSetup(.keygen, at: runner).names
                == validation + ["durable replay", "authorize", "rate limits", "lease", "ban", "key state"])
        // session.md §9.4: a banned device may still reconcile.
        #expect(AdmissionPlans.webSocketSetup(.reconcile, at: runner).names
                == validation + ["durable replay", "authorize", "lease", "key state"])
        #expect(AdmissionPlans.webSocketSetup(.sign, linkInstance: .random(), at: runner).names
                == validation + ["link instance", "durable replay", "authorize", "rate limits", "ban", "key state"])
        // The export reads before it writes (security review 2, finding 4): its replay record after the key checks.
        #expect(AdmissionPlans.exportPost(at: runner).names
                == validation + ["count refusals", "authorize credential", "export fields", "ban", "key state",
                                 "audit refusals", "durable replay", "generation"])
        let counted = ["refusal limits", "count refusals"]
        #expect(AdmissionPlans.presignatureRequest(.finalRequest, at: runner).names
                == counted + ["scope", "authorize", "count authenticator failures", "presignature state", "device limits",
                              "ban", "authenticate"])
        #expect(AdmissionPlans.presignatureRequest(.presigQuery, at: runner).names == counted + ["query payload", "scope"])
        #expect(AdmissionPlans.presignatureRequest(.relay, at: runner).names == counted + ["scope"])
        #expect(AdmissionPlans.presignatureRequest(.refused(.malformed), at: runner).names == counted + ["refuse MALFORMED"])
    }
}
