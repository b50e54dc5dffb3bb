import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

@Suite("FROST Lagrange coefficients (cached)", .heavy)
struct FROSTLagrangeCacheTests {
    typealias Scalar = Ed25519.Scalar

    @Test("known coefficients, identical on every call, refusals unchanged")
    func knownValues() throws {
        let one = try #require(FROST.Identifier(value: 1)), two = try #require(FROST.Identifier(value: 2))
        let three = try #require(FROST.Identifier(value: 3))
        for _ in 0..<3 {
            // Over {1, 2} at 0: λ1 = 2/(2−1) = 2, λ2 = 1/(1−2) = −1.
            #expect(try FROST.lagrange(one, over: [one, two]) == Scalar.one + Scalar.one)
            #expect(try FROST.lagrange(two, over: [one, two]) == Scalar.zero - Scalar.one)
            // Over {1, 3} at x = 2: λ1 = (2−3)/(1−3) = 1/2, λ3 = (2−1)/(3−1) = 1/2; they sum to 1.
            let half1 = try FROST.lagrange(one, over: [one, three], at: two.scalar)
            let half3 = try FROST.lagrange(three, over: [one, three], at: two.scalar)
            #expect(half1 == half3 && half1 + half3 == Scalar.one)
            #expect(throws: ProtocolError.self) { try FROST.lagrange(three, over: [one, two]) }
            #expect(throws: ProtocolError.self) { try FROST.lagrange(one, over: [one, one]) }
        }
    }
}
