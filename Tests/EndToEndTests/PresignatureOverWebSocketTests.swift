import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
@testable import trio

/// Presignatures end to end in both modes (`docs/protocol/session.md` §8): preSign over the WebSocket
/// (duo: `/v3/{algorithm}/presign`; trio: with X = A or X = B, stored at X only), preSignatureFinal and
/// PRESIG_QUERY as HTTP POSTs of the stock network client with the app's token (trio: A relays to B over a
/// purpose-2 link); single use at the app and at the node. DKLs23 and FROST; every signature verified with
/// the primitives under the key or the derived key. The trio-only node checks are in
/// `Trio/TrioPresignatureNodeTests`.
@Suite("End to end: presignatures over loopback WebSocket and HTTP POST (both modes)", .serialized, .heavy,
       .timeLimit(.minutes(30)))
struct PresignatureOverWebSocketTests {
    /// A mode and the node that co-signs: duo's node (nil); trio's A or B.
    struct Signer: Sendable, CustomTestStringConvertible {
        let mode: Keyshare.Mode
        let node: TrioSigner?
        var testDescription: String { node.map { "\(mode) with \($0)" } ?? "\(mode)" }
    }

    /// Each mode's signer choices: duo's node; trio's A and B.
    static let signers = [Signer(mode: .duo, node: nil), Signer(mode: .trio, node: .nodeA), Signer(mode: .trio, node: .nodeB)]

    /// The derived key P′ for `path` from the app keyshare (public derivation with the protocol code:
    /// DKLs23's BIP32, FROST's additive tweak through `Keyshare.childPublicKey`).
    static func derivedKey(_ keyshare: Keyshare, path: String) throws -> Data {
        switch keyshare.algorithm {
        case .ecdsa:
            let point = try DKLsBIP32.deriveChildPublicKey(keyshare: try keyshare.dklsKeyshare(), path: try DerivationPath(path)).publicKey
            return Data(try point.compressed())
        case .eddsa:
            return try keyshare.childPublicKey(path: path)
        }
    }

    /// `signature` over `message` under `publicKey` (libsecp256k1 verify + recovery / libsodium).
    static func verifies(_ signature: Signature, message: Data, publicKey: Data, algorithm: Keyshare.Algorithm) throws -> Bool {
        switch algorithm {
        case .ecdsa:
            let key = try Secp256k1.Point(compressed: [UInt8](publicKey))
            guard let r = signature.r, let s = signature.s, let v = signature.recoveryId else { return false }
            let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
            let recovered = try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](message))
            return Secp256k1.ECDSA.verify(raw, hash: [UInt8](message), publicKey: key) && recovered == key
        case .eddsa:
            return try Ed25519.VerifyingKey(bytes: [UInt8](publicKey)).isValidSignature([UInt8](signature.rawRepresentation),
                                                                                        for: [UInt8](message))
        }
    }

    /// Two presignatures with one signer (at the root and at `m/7/1`), stored at that node only, listed by
    /// PRESIG_QUERY; each finished once over one POST (a retry with the same message answers the same
    /// signature from the finish record, session.md §8.5; another message is `presignatureConsumed`); the
    /// node's count falls with each final; the app never sent two different requests for one presignature;
    /// 50 concurrent finals of a third presignature give exactly one signature; ordinary signing still works.
    @Test(arguments: signers, [Keyshare.Algorithm.ecdsa, .eddsa])
    func presignFinishOnceAndStatus(signer choice: Signer, algorithm: Keyshare.Algorithm) async throws {
        let mode = choice.mode, signer = choice.node
        let fixture = try EndToEndFixture(mode: mode, token: "t")
        let ledger = FinalRequestLedger()
        let storage = InMemoryStorageClient()
        let session = fixture.session(algorithm, storage: storage,
                                      networkClient: LedgerRecordingClient(inner: fixture.stockNetworkClient(), ledger: ledger))
        let keyshare = try await session.keygen()
        let atRoot = try await session.preSignature(keyshare: keyshare, signer: signer)
        let derived = try await session.preSignature(keyshare: keyshare, chainPath: "m/7/1", signer: signer)
        #expect(try fixture.store(signer).presignatureCount(keyId: keyshare.keyId) == 2)
        for other in fixture.stores where other !== fixture.store(signer) {
            #expect(try other.presignatureCount(keyId: keyshare.keyId) == 0)
        }
        let signerIndex: PartyIndex = signer == .nodeB ? 2 : 1
        for presignature in [atRoot, derived] {
            #expect(presignature.signerIndex == signerIndex && presignature.keyId == keyshare.keyId && !presignature.isConsumed)
            #expect(presignature.expiresAt > Date().addingTimeInterval(23 * 3600))
            #expect(!presignature.description.contains("Secrets") && presignature.description.contains("consumed: false"))
        }
        #expect(atRoot.derivedPublicKey == keyshare.publicKey)
        let derivedKey = try Self.derivedKey(keyshare, path: "m/7/1")
        #expect(derived.derivedPublicKey == derivedKey && derivedKey != keyshare.publicKey)
        #expect(Set(try await session.reconcilePreSignatures(keyshare: keyshare).map(\.id)) == [atRoot.id, derived.id])

        let message = EndToEnd.message(algorithm, "presigned with \(mode) \(String(describing: signer))")
        let signature = try await session.preSignatureFinal(preSignature: atRoot, message: message)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        #expect(atRoot.isConsumed)
        #expect(try fixture.store(signer).presignatureCount(keyId: keyshare.keyId) == 1)
        // session.md §8.5: the tombstone holds the exact request; a retry with the same message resends it and the
        // node answers from its finish record (same signature); another message fails locally.
        let storageKey = "~ss/presig/" + Hex.encode([UInt8](atRoot.id))
        let tombstone = try #require(try await storage.read(keyId: storageKey))
        let record = try PresignatureRecord(bytes: [UInt8](try #require(tombstone.current).bytes), storageKeyId: storageKey)
        #expect(record.state == .finished(message: [UInt8](message), signature: signature.recordBytes) && record.sealedSecrets.isEmpty)
        let again = try await session.preSignatureFinal(preSignature: atRoot, message: message)
        #expect(again.rawRepresentation == signature.rawRepresentation)
        await #expect(throws: SilentShardError.presignatureConsumed) {
            _ = try await session.preSignatureFinal(preSignature: atRoot, message: message + Data([1]))
        }
        #expect(try await session.reconcilePreSignatures(keyshare: keyshare).map(\.id) == [derived.id])

        // The derived presignature signs under the derived key, as a regular signature at m/7/1 does.
        let derivedSignature = try await session.preSignatureFinal(preSignature: derived, message: message)
        #expect(try Self.verifies(derivedSignature, message: message, publicKey: derivedKey, algorithm: algorithm))
        let regular = try await session.signature(keyshare: keyshare, message: message, chainPath: "m/7/1", signer: signer)
        #expect(try Self.verifies(regular, message: message, publicKey: derivedKey, algorithm: algorithm))
        #expect(try fixture.store(signer).presignatureCount(keyId: keyshare.keyId) == 0)
        #expect(ledger.eachPresignatureHadOneRequest && ledger.distinctRequestCounts.count == 2)

        // 50 concurrent finals of one presignature, each with another message: one signature, 49 refusals.
        let shared = try await session.preSignature(keyshare: keyshare, signer: signer)
        let outcomes = await withTaskGroup(of: (Data, Result<Signature, SilentShardError>).self) { group in
            for index in 0..<50 {
                group.addTask {
                    let message = EndToEnd.message(algorithm, "fifty \(index)")
                    do throws(SilentShardError) {
                        return (message, .success(try await session.preSignatureFinal(preSignature: shared, message: message)))
                    }
                    catch { return (message, .failure(error)) }
                }
            }
            var all: [(Data, Result<Signature, SilentShardError>)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        let signatures = outcomes.compactMap { outcome in (try? outcome.1.get()).map { (outcome.0, $0) } }
        #expect(signatures.count == 1)
        for (message, signature) in signatures {
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        }
        #expect(outcomes.filter { if case .failure(.presignatureConsumed) = $0.1 { true } else { false } }.count == 49)

        // Ordinary signing still works.
        let plain = try await session.signature(keyshare: keyshare, message: EndToEnd.message(algorithm, "plain"), signer: signer)
        #expect(try EndToEnd.verifies(plain, message: EndToEnd.message(algorithm, "plain"), keyshare: keyshare))
        await fixture.stop()
    }
}
