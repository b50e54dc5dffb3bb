import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

@Suite("Duo node runner: validation, replay, deadlines", .serialized, .heavy, .timeLimit(.minutes(30)))
struct NodeRunnerTests {
    /// Captures the app's SETUP message of a keygen.
    private func capturedSetup(_ fixture: DuoFixture) async throws -> Data {
        _ = try await fixture.session.keygen()
        return try #require(fixture.client.sentMessages.first)
    }

    @Test func replayedSetupIsRejected() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let setup = try await capturedSetup(fixture)
        let connection = try await ScriptedConnection(messages: [setup])
        let report = await fixture.runner.run(connection: connection,
                                              route: NodeStepRoute(algorithm: .ecdsa, operation: .keygen, params: nil))
        #expect(report == .rejected(.replay))
        #expect(connection.closeCode == 1008)
        // The REJECT is signed by the node key and bound to the SETUP's instance id.
        let reject = try #require(connection.sentFrames.first)
        #expect(reject.header.kind == .reject && reject.hasValidSignature(by: fixture.nodeKey.verifyingKey))
    }

    /// Finding 11: a runner used without a principal (an embedding with no verifier) still records an
    /// owner for the keys it creates — `anonymous`, the subject `--auth none` gives every client.
    @Test func keysMadeWithoutAPrincipalAreOwnedByAnonymous() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        #expect(try fixture.store.ownership(keyId: keyshare.keyId) == .owned(by: NoTokenVerifier.subject))
    }

    @Test func setupOnAnotherRouteIsRouteMismatch() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let setup = try await capturedSetup(fixture)
        let connection = try await ScriptedConnection(messages: [setup])
        let report = await fixture.runner.run(connection: connection,
                                              route: NodeStepRoute(algorithm: .eddsa, operation: .keygen, params: nil))
        #expect(report == .rejected(.routeMismatch))
    }

    @Test func tamperedSetupIsRejectedWithoutState() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        var bytes = [UInt8](try await capturedSetup(fixture))
        bytes[bytes.count - 1] ^= 0x80   // the device signature
        let connection = try await ScriptedConnection(messages: [Data(bytes)])
        let report = await fixture.runner.run(connection: connection,
                                              route: NodeStepRoute(algorithm: .ecdsa, operation: .keygen, params: nil))
        #expect(report == .rejected(.deviceSignatureInvalid))
    }

    /// A silent client: the node gives up at its deadline, closes, and stores nothing.
    @Test func silentClientTimesOut() async throws {
        let nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-duo-timeout-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
        let runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow(),
                                   setupTimeout: .milliseconds(200), frameTimeout: .milliseconds(200))
        let connection = try await ScriptedConnection(messages: [])
        let report = await runner.run(connection: connection,
                                      route: NodeStepRoute(algorithm: .ecdsa, operation: .keygen, params: nil))
        #expect(report == .failed(.timeout))
        #expect(connection.closeCode != nil)
    }
}
