import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing

/// A `cloudVerifyingKey` that is not the node's (duo) or the cluster's (trio): the entry node refuses the SETUP
/// (WRONG_CLUSTER), the app cannot authenticate anything from it and says so with a typed error; nothing is stored
/// anywhere.
@Suite("Session: the app's cloud key", .timeLimit(.minutes(30)))
struct CloudKeyTests {
    @Test(arguments: Keyshare.Mode.allCases, [Keyshare.Algorithm.ecdsa, .eddsa])
    func wrongCloudKeyIsATypedError(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let other = Hex.encode(Ed25519.SigningKey().verifyingKey.bytes)
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm, cloudKeyOverride: other)
        await #expect(throws: SilentShardError.cloudVerificationFailed(reason: "wrong cluster")) {
            _ = try await fixture.session.keygen()
        }
        #expect(fixture.client.reports == [.rejected(.wrongCluster)])
        #expect(fixture.storage.writes.isEmpty)
        for store in fixture.stores { #expect(try store.keyCount() == 0) }
    }
}
