import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing

/// The basic flow in both modes, app ↔ node(s) in process: keygen (every node commits the generation, the
/// app's record goes staged → current), a signature with the node the app connects to, a refresh (same key,
/// new generation everywhere), signatures with each signer set, and the old generation refused. Trio's own
/// checks (the group id, B signing at a path through A's relay, the shares combining) are in
/// `Trio/TrioSessionTests.keygenSharesCombineAndBSignsThroughTheRelay`.
@Suite("Session: keygen, sign, refresh, sign (both modes)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct KeygenSignRefreshTests {
    /// Each mode's record of the current share (as its keygen writes it): duo the protocol bytes, trio the
    /// serialized keyshare at its end.
    static func isRecord(of keyshare: Keyshare, _ bytes: Data?) -> Bool {
        guard let bytes else { return false }
        switch keyshare.mode {
        case .duo: return bytes == Data(keyshare.protocolKeyshareBytes)
        case .trio: return bytes.suffix(keyshare.serialized().count) == keyshare.serialized()
        }
    }

    @Test(arguments: Keyshare.Mode.allCases, [Keyshare.Algorithm.ecdsa, .eddsa])
    func keygenSignRefreshSign(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        #expect(keyshare.algorithm == algorithm && keyshare.mode == mode && keyshare.party == 0)
        #expect(keyshare.threshold == 2 && keyshare.partyCount == fixture.stores.count + 1)

        // Every node committed its share of the same generation; the app's record went staged → current.
        for store in fixture.stores {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
            #expect(try store.status(keyId: keyshare.keyId).preparedGen == nil)
            #expect(try store.decision(keyId: keyshare.keyId, gen: [UInt8](keyshare.generation)) == .committed)
        }
        let writes = fixture.storage.writes
        #expect(writes.count == 2)
        #expect(writes.first?.staged != nil && writes.first?.current == nil)
        #expect(writes.last?.staged == nil && Self.isRecord(of: keyshare, writes.last?.current?.bytes))
        #expect(fixture.client.reports.last == .committed(keyId: keyshare.keyId, gen: keyshare.gen))

        // Serialization round trip; the description shows no share.
        let decoded = try Keyshare(serialized: keyshare.serialized())
        #expect(decoded == keyshare)
        #expect(!decoded.description.contains(Hex.encode(keyshare.protocolKeyshareBytes.prefix(16))))

        // The node the app connects to co-signs (duo's node, trio's A).
        let message = testMessage(algorithm, "\(mode) test")
        let signature = try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message)
        #expect(signature.algorithm == algorithm)
        #expect(try verify(signature, message: message, keyshare: keyshare))
        if algorithm == .ecdsa {
            #expect(signature.der != nil && signature.recoverable?.count == 65)
        }
        #expect(fixture.client.reports.last == .signed(confirmed: true))

        // Refresh: same key, new generation, committed everywhere.
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.keyId == keyshare.keyId && refreshed.publicKey == keyshare.publicKey)
        #expect(refreshed.generation != keyshare.generation)
        for store in fixture.stores {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](refreshed.generation))
        }
        let record = try await fixture.storage.read(keyId: keyshare.keyId)
        #expect(record?.staged == nil && Self.isRecord(of: refreshed, record?.current?.bytes))
        let text = testMessage(algorithm, "after refresh")
        for signature in try await fixture.session.signatureWithEachSigner(keyshare: refreshed, message: text) {
            #expect(try verify(signature, message: text, keyshare: refreshed))
        }

        // The old generation is refused (authenticated REJECT STALE_GENERATION); trio: by B too.
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message)
        }
        if case .trio(let session) = fixture.session {
            await #expect(throws: SilentShardError.self) {
                _ = try await session.signature(keyshare: keyshare, message: message, signer: .nodeB)
            }
        }
    }
}
