import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Security review 2, finding 4 at trio node A: a FINAL_REQUEST for B is authorized (scope, the session.md §9.5
/// limit of refused requests) before A opens a link to B.
@Suite("Trio: refusal paths at node A (security review 2, finding 4)", .heavy, .timeLimit(.minutes(30)))
struct TrioRefusalFindingsTests {
    static func finalRequest(id: InstanceID, receiver: UInt8) -> [UInt8] { NodeAnswers.junkFinalRequest(id: id, receiver: receiver) }

    static func rejectCode(_ answer: [UInt8]?) -> WireCode? { NodeAnswers.rejectCode(answer) }

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
}
