import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing

/// Export end to end in both modes, each the mode's way (`EndToEndFixture.export`): duo — the app's
/// request POSTed by the operator's backend over loopback HTTP (bearer credential with scope `export`),
/// the app combines; trio — the app's WebSocket step, A and B each encrypting their share to the app's
/// one-time key (B's through A), both granting the `export` scope. The mode-only checks are in
/// `Duo/DuoExportPostTests` (tampering, replay, routes, credentials of the POST) and
/// `Trio/TrioExportNodesTests` (the scope at both nodes, B needed).
@Suite("End to end: export before and after a refresh (both modes)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct ExportTests {
    /// Trio export needs the explicit `export` scope at both nodes (session.md §9.3; never granted by default).
    static let trioScopes: Set<String> = ["keygen", "refresh", "sign", "reconcile", "export"]

    /// Duo: the app's token is `app` (default scopes), the backend's `backend` (scope `export` for the
    /// subject `app`); trio: the app's token `t` with `trioScopes` at A and B.
    static func fixture(_ mode: Keyshare.Mode) throws -> EndToEndFixture {
        switch mode {
        case .duo: try EndToEndFixture(mode: .duo, token: "app", verifier: BackendTokens(), backendToken: "backend")
        case .trio: try EndToEndFixture(mode: .trio, token: "t", scopes: trioScopes)
        }
    }

    /// Export, refresh, export again: the same key (the shares changed, the secret did not). The key
    /// belongs to the public key (privateKey·G with the primitives) and signs for it, the chain code is the
    /// keyshare's root chain code, the path `m`, the secret in no description; the old generation cannot
    /// export after the refresh (`staleKeyshare`).
    @Test(arguments: [Keyshare.Mode.duo, .trio], [Keyshare.Algorithm.ecdsa, .eddsa])
    func exportBeforeAndAfterRefresh(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try Self.fixture(mode)
        let session = fixture.session(algorithm)
        let keyshare = try await session.keygen()
        let exported = try await fixture.export(session, keyshare: keyshare)
        #expect(exported.algorithm == algorithm && exported.keyId == keyshare.keyId && exported.chainPath == "m")
        #expect(exported.publicKey == keyshare.publicKey && exported.chainCode == keyshare.rootChainCode)
        #expect(try ExportChecks.publicKey(of: exported) == keyshare.publicKey)
        try ExportChecks.expectSigns(exported, for: keyshare.publicKey)
        ExportChecks.expectRedacted(exported)

        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await fixture.export(session, keyshare: keyshare)
        }
        let again = try await fixture.export(session, keyshare: refreshed)
        #expect(again == exported)
        try ExportChecks.expectSigns(again, for: refreshed.publicKey)
        await fixture.stop()
    }
}
