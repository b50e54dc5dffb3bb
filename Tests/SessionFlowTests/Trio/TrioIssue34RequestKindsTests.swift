import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
@testable import CloudNode
import trio

/// Issue 34 item 3 at the trio nodes: the preSignFinal route's request kinds — FINAL_REQUEST and PRESIG_QUERY, at
/// the signer A itself or relayed by A to the signer B — run the same admission stages as the duo node's: (a) a
/// failed authentication is counted, (b) a device the signer's process banned is refused with BANNED (PRESIG_QUERY,
/// which names no device, is answered), (c) at A, a refused unauthenticated request writes nothing.
@Suite("Trio nodes: every preSignFinal request kind through one admission (issue 34 item 3)", .heavy, .timeLimit(.minutes(20)))
struct TrioIssue34RequestKindsTests {
    enum Kind: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case finalRequest, presigQuery
        var testDescription: String { rawValue }
    }

    static let address = "192.0.2.34"

    @Test("issue 34 item 3: FINAL_REQUEST and PRESIG_QUERY at A and relayed to B count a failed authentication and refuse a banned device",
          arguments: Kind.allCases, [TrioSigner.nodeA, .nodeB])
    func issue34_item3_everyRequestKindAtTrioNodes(kind: Kind, signer: TrioSigner) async throws {
        let clock = ManualClock()
        let limits = NodeRateLimits(failedDeviceSignaturesPerMinute: 1, failedRequestsPerMinute: 1)
        let limiterA = NodeRateLimiter(limits: limits, clock: clock.read)
        let limiterB = NodeRateLimiter(limits: limits, clock: clock.read)
        let fixture = try TrioFixture(algorithm: .eddsa, rateLimiterA: limiterA, rateLimiterB: limiterB, clock: clock)
        let keyshare = try await fixture.session.keygen()
        let made = try await fixture.session.preSignature(keyshare: keyshare, signer: signer)
        let presignature = try #require(InstanceID([UInt8](made.id)))
        let device = try DeviceKey(signer: fixture.signer).identity
        let x: UInt8 = signer == .nodeA ? 1 : 2
        let (signerRunner, signerLimiter, signerStore) = signer == .nodeA
            ? (fixture.runnerA, limiterA, fixture.storeA) : (fixture.runnerB, limiterB, fixture.storeB)

        func ask(_ principal: Principal?, address: String?) async -> WireCode? {
            let body: [UInt8] = switch kind {
            case .finalRequest: NodeAnswers.junkFinalRequest(id: presignature, receiver: x)
            case .presigQuery:
                PresignatureQueryPayload(keyID: keyshare.keyID, ids: [presignature]).frame(signer: x, instanceID: .random()).encoded()
            }
            return NodeAnswers.rejectCode(await fixture.runnerA.preSignFinal(body: body, token: nil, principal: principal,
                                                                             algorithm: .eddsa, clientAddress: address))
        }

        // (a) and (c): a junk authenticator (FINAL_REQUEST); a token without the scope (PRESIG_QUERY).
        let (writesA, linesA, linesX) = (fixture.storeA.writeTransactionCount, try fixture.storeA.auditLog(limit: 1_000_000).count,
                                         try signerStore.auditLog(limit: 1_000_000).count)
        let refused = await ask(kind == .presigQuery ? Principal(subject: NoTokenVerifier.subject, scopes: ["sign"]) : nil,
                                address: Self.address)
        #expect(refused == (kind == .finalRequest ? .badAuthenticator : .forbidden))
        #expect(await limiterA.checkRequestFailures(principal: nil, address: Self.address) != .allowed,
                "(a) A counts the refusal against the client's address")
        if kind == .finalRequest {
            #expect(signerLimiter.checkDevice(device, principal: "") != .allowed, "(a) the signer's (principal, device key) window")
        }
        if signer == .nodeA {
            #expect(fixture.storeA.writeTransactionCount == writesA, "(c) write transactions at A")
        }
        #expect(try fixture.storeA.auditLog(limit: 1_000_000).count == linesA, "(c) audit lines at A")
        #expect(try signerStore.auditLog(limit: 1_000_000).count == linesX, "(c) audit lines at the signer")

        // (b) The signer's process banned the device (its store write failing: the ban is in its ledger only).
        clock.advance(seconds: 61)   // past the refusal windows of (a)
        #expect(await signerRunner.bans.ban(device, log: { _ in }, write: { throw CancellationError() }) == false)
        let banned = await ask(nil, address: "198.51.100.34")
        #expect(banned == (kind == .finalRequest ? .banned : nil), "(b) \(kind) at \(signer)")
    }
}
