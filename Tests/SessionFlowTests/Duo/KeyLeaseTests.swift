import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// session.md §7.2: one share-changing session per key at the node. A refresh that meets another session's lease
/// is refused with `keyBusy` and changes nothing on either side; signing is not affected.
@Suite("Duo node runner: per-key lease", .heavy, .timeLimit(.minutes(30)))
struct KeyLeaseTests {
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func refreshMeetingALeaseIsKeyBusy(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try DuoFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        let otherSession = [UInt8](repeating: 0xAB, count: 32)
        try fixture.store.acquireLease(keyId: keyshare.keyId, holder: otherSession, seconds: 60)

        await #expect(throws: SilentShardError.keyBusy) { _ = try await fixture.session.keyRefresh(keyshare: keyshare) }
        #expect(try fixture.store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        #expect(try await fixture.storage.read(keyId: keyshare.keyId)?.staged == nil)

        // Signing runs beside a lease.
        let message = Data(repeating: 0x42, count: 32)
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message)
        let verified = algorithm == .ecdsa
            ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
            : try verifyEdDSA(signature, message: message, keyshare: keyshare)
        #expect(verified)

        // Once the other session ends, the refresh goes through and releases its own lease.
        try fixture.store.releaseLease(keyId: keyshare.keyId, holder: otherSession)
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.generation != keyshare.generation)
        _ = try await fixture.session.keyRefresh(keyshare: refreshed)
    }
}
