import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// Duo presignatures (protocol v2, issue 20) against a real node: preSign over the WebSocket
/// (`/v3/{algorithm}/presign`), preSignatureFinal and PRESIG_QUERY as HTTP POSTs of the stock
/// `DuoNetworkClient` (`/v3/duo/presign-final`, `/v3/duo/eddsa/presign-final`) with the app's token.
@Suite("Duo presignatures over loopback WebSocket and HTTP POST", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoPresignatureOverWebSocketTests {
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func presignFinishAndStatus(algorithm: Keyshare.Algorithm) async throws {
        let node = try DuoOverWebSocketTests.startNode(verifier: try StaticTokenVerifier(token: "t"))
        let config = WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)", authenticationToken: "t")
        let ledger = FinalRequestLedger()
        let client = LedgerRecordingClient(inner: DuoNetworkClient(websocketConfig: config), ledger: ledger)
        let cloudKey = Hex.encode(node.key.verifyingKey.bytes), storage = InMemoryStorageClient()
        let session = algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                             storageClient: storage, networkClient: client, actionProvider: .ecdsa)
            : SilentShard.EdDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                             storageClient: storage, networkClient: client, actionProvider: .eddsa)
        let keyshare = try await session.keygen()
        let first = try await session.preSignature(keyshare: keyshare)
        let second = try await session.preSignature(keyshare: keyshare, chainPath: "m/0/7")
        #expect(try node.store.presignatureCount(keyId: keyshare.keyId) == 2)
        #expect(Set(try await session.reconcilePreSignatures(keyshare: keyshare).map(\.id)) == [first.id, second.id])

        let message = algorithm == .ecdsa ? Data(SHA256.hash(Array("duo over the wire".utf8))) : Data("duo over the wire".utf8)
        let signature = try await session.preSignatureFinal(preSignature: first, message: message)
        #expect(try DuoOverWebSocketTests.verifies(signature, message: message, keyshare: keyshare))
        await #expect(throws: SilentShardError.presignatureConsumed) {
            _ = try await session.preSignatureFinal(preSignature: first, message: message + Data([1]))
        }
        #expect(try await session.reconcilePreSignatures(keyshare: keyshare).map(\.id) == [second.id])
        #expect(try node.store.presignatureCount(keyId: keyshare.keyId) == 1)
        #expect(ledger.eachPresignatureHadOneRequest && ledger.distinctRequestCounts.count == 1)
        await node.server.stop()
    }
}
