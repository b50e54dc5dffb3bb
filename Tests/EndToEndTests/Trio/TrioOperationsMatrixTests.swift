import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Trio's own operations × both algorithms × all three `trioInitiator` overloads, over real loopback
/// sockets against two node servers (A relays to B over `/v3/peer`): presignatures with each node,
/// export, hard derivation (ECDSA; EdDSA refuses it), recovery. The operations of every mode are in
/// `InitiatorMatrixTests`. Every signature is verified under the derived child key for soft paths.
@Suite("Trio end to end: trio's operations × algorithm × initiator overload", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioOperationsMatrixTests {
    typealias Overload = InitiatorMatrixTests.Overload

    static let cases: [(Overload, Keyshare.Algorithm)] = Overload.allCases.flatMap { o in [(o, .ecdsa), (o, .eddsa)] }

    @Test(arguments: cases)
    func trioOperations(overload: Overload, algorithm: Keyshare.Algorithm) async throws {
        let cluster = try TrioCluster.start(token: "matrix", scopes: InitiatorMatrixTests.allScopes)
        let config = WebsocketConfig(url: cluster.url, authenticationToken: "matrix")
        // P-256 device keys on one overload, Ed25519 on the others: both signer types end to end.
        let signer: any MessageSigner = overload == .networkClient ? SoftwareP256MessageSigner() : SoftwareEd25519MessageSigner()
        let session = InitiatorMatrixTests.trioSession(overload, algorithm, signer: signer, cloudKey: cluster.cloudVerifyingKey,
                                                       config: config, storage: InMemoryStorageClient())
        func message(_ text: String) -> Data { EndToEnd.message(algorithm, text) }
        func expectVerified(_ signature: Signature, _ text: String, _ keyshare: Keyshare, path: String = "m") throws {
            try InitiatorMatrixTests.expectVerified(signature, message(text), keyshare, path: path, "\(overload) \(algorithm) \(text) \(path)")
        }

        let keyshare = try await session.keygen()
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        // presignature with each node, finished over one POST, under a soft path
        for signer in [TrioSigner.nodeA, .nodeB] {
            let presignature = try await session.preSignature(keyshare: refreshed, chainPath: "m/3", signer: signer)
            try expectVerified(try await session.preSignatureFinal(preSignature: presignature, message: message("final \(signer)")),
                               "final \(signer)", refreshed, path: "m/3")
        }
        // export: the whole key belongs to the public key
        let exported = try await session.export(keyshare: refreshed)
        #expect(exported.publicKey == refreshed.publicKey && (try? ExportChecks.publicKey(of: exported)) == exported.publicKey)
        // hard derivation (ECDSA; EdDSA has none)
        if algorithm == .ecdsa {
            let child = try await session.hardDerivation(keyshare: refreshed, path: "m/44'/0'/2'")
            #expect(child.keyId != refreshed.keyId)
            try expectVerified(try await session.signature(keyshare: child, message: message("hard"), signer: .nodeB), "hard", child)
        } else {
            await #expect(throws: SilentShardError.unsupportedOperation) {
                _ = try await session.hardDerivation(keyshare: refreshed, path: "m/44'/0'/2'")
            }
        }
        // recovery with fresh storage and the same device key, then sign with both nodes
        let recovering = InitiatorMatrixTests.trioSession(overload, algorithm, signer: signer, cloudKey: cluster.cloudVerifyingKey,
                                                          config: config, storage: InMemoryStorageClient())
        let recovered = try await recovering.recovery(keysharePublicKey: refreshed.publicKey)
        #expect(recovered.publicKey == refreshed.publicKey && recovered.generation != refreshed.generation)
        for signer in [TrioSigner.nodeA, .nodeB] {
            try expectVerified(try await recovering.signature(keyshare: recovered, message: message("recovered \(signer)"),
                                                              signer: signer), "recovered \(signer)", recovered)
        }
        await cluster.stop()
    }
}
