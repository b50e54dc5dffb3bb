import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// The SDK of each mode against real nodes: the initiator → our WebSocket client → loopback TCP → the
/// libwebsockets node server(s) → the node's session runner and SQLite share store (trio: A relays to B
/// over its inter-node link). One behaviour per test, in both modes (issue 34).
@Suite("End to end over loopback WebSockets (both modes)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct OverWebSocketTests {
    static let modes: [Keyshare.Mode] = [.duo, .trio]
    static let algorithms: [Keyshare.Algorithm] = [.ecdsa, .eddsa]

    /// Keygen (every node stores the generation), a signature with each signer set of the mode (duo: the
    /// node; trio: A, then B), a refresh (same key, new generation, at every node), a signature after it.
    /// Every signature verified with the primitives.
    @Test(arguments: modes, algorithms)
    func keygenSignWithEachSignerRefreshSign(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try EndToEndFixture(mode: mode, token: "app-token")
        let session = fixture.session(algorithm)
        let keyshare = try await session.keygen()
        #expect(keyshare.mode == mode && keyshare.partyCount == fixture.partyCount && keyshare.threshold == 2)
        for store in fixture.stores {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        }
        for signer in fixture.signers {
            let message = EndToEnd.message(algorithm, "over sockets with \(String(describing: signer))")
            let signature = try await session.signature(keyshare: keyshare, message: message, signer: signer)
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        }
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey && refreshed.generation != keyshare.generation)
        for store in fixture.stores {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](refreshed.generation))
        }
        let message = EndToEnd.message(algorithm, "after refresh")
        let signature = try await session.signature(keyshare: refreshed, message: message)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: refreshed))
        await fixture.stop()
    }

    /// A wrong or missing app token is refused by the node the app connects to (duo's node, trio's A)
    /// before any protocol work, for either algorithm; the node keeps serving: the right token works.
    @Test(arguments: modes)
    func wrongOrMissingTokenIsRefusedAndTheNodeKeepsServing(mode: Keyshare.Mode) async throws {
        let fixture = try EndToEndFixture(mode: mode, token: "app-token-1")
        for algorithm in Self.algorithms {
            await #expect(throws: SilentShardError.self) { _ = try await fixture.session(algorithm, token: "wrong").keygen() }
            await #expect(throws: SilentShardError.self) { _ = try await fixture.session(algorithm, token: .some(nil)).keygen() }
        }
        let keyshare = try await fixture.session(.eddsa).keygen()
        #expect(keyshare.publicKey.count == 32)
        await fixture.stop()
    }

    /// A `cloudVerifyingKey` other than the node's (duo) or the cluster's (trio): a typed error
    /// (`cloudVerificationFailed`, or the node's authenticated refusal), no keyshare.
    @Test(arguments: modes, algorithms)
    func wrongCloudKeyIsATypedError(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try EndToEndFixture(mode: mode, token: "t")
        let session = fixture.session(algorithm, cloudKey: Hex.encode(Ed25519.SigningKey().verifyingKey.bytes))
        do {
            _ = try await session.keygen()
            Issue.record("keygen succeeded under a foreign cloud key")
        } catch {
            switch error {
            case .cloudVerificationFailed, .rejected: break
            default: Issue.record("unexpected \(error)")
            }
        }
        await fixture.stop()
    }
}
