import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// session.md §9.1–9.3 at the trio nodes over real sockets, with the HS256 JWT verifier at both nodes (B checks
/// the token A forwards in LINK_OPEN itself): scopes, key owners, device binding, and recover with a
/// new device key.
@Suite("Trio authorization: scopes, key owners, device binding (JWT)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioAuthorizationTests {
    /// The verifier's clock: tokens expire 600 s after it, and it stands still, so no token expires
    /// however long a loaded machine takes to run the test.
    static let tokenClock = ManualClock()
    static let secret = [UInt8](repeating: 0x5A, count: 32)

    static func jwt(sub: String, scope: String? = nil, binding: [UInt8]? = nil) -> String {
        func base64url(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let exp = Int(tokenClock.seconds) + 600
        let scopeClaim = scope.map { #","scope":"\#($0)""# } ?? ""
        let bindingClaim = binding.map { #","device_binding":"\#(Hex.encode($0))""# } ?? ""
        let header = base64url(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64url(Array(#"{"sub":"\#(sub)","exp":\#(exp)\#(scopeClaim)\#(bindingClaim)}"#.utf8))
        let input = header + "." + payload
        return input + "." + base64url(SHA256.hmac(key: secret, data: Array(input.utf8)))
    }

    static func cluster() throws -> TrioCluster {
        try TrioCluster.start(token: "unused", verifier: JWTHS256Verifier(secret: secret, now: tokenClock.date))
    }

    static func session(_ algorithm: Keyshare.Algorithm, _ cluster: TrioCluster, device: any MessageSigner,
                        token: String, storage: any StorageClient = InMemoryStorageClient()) -> TrioSession {
        let config = WebsocketConfig(url: cluster.url, authenticationToken: token)
        switch algorithm {
        case .ecdsa:
            return SilentShard.ECDSA.trioInitiator(messageSigner: device, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                                   websocketConfig: config, storageClient: storage)
        case .eddsa:
            return SilentShard.EdDSA.trioInitiator(messageSigner: device, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                                   websocketConfig: config, storageClient: storage)
        }
    }

    static func device(_ store: NodeShareStore, _ keyId: String) throws -> [UInt8]? {
        try store.share(keyId: keyId).map { try NodeShareBlob(bytes: $0.bytes).deviceIdentity }
    }

    /// Security review 2, finding 9: a signing session of another subject ends as one on a key neither node
    /// holds (SIGNER_UNAVAILABLE from each signer: `peerUnavailable`), not FORBIDDEN.
    static func expectNotHere(_ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
        let error = await #expect(throws: SilentShardError.self, sourceLocation: sourceLocation) { try await body() }
        guard case .peerUnavailable? = error else {
            Issue.record("expected peerUnavailable (a key not held), got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
    }

    /// The owner is recorded at both nodes in the commit transaction (keygen and a hard child); another
    /// subject, even with the registered device key, is answered as for a key the nodes do not hold (security
    /// review 2, finding 9); a missing scope is FORBIDDEN.
    @Test func scopesAndOwners() async throws {
        let cluster = try Self.cluster()
        let device = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        let alice = Self.session(.ecdsa, cluster, device: device, token: Self.jwt(sub: "alice"), storage: storage)
        let keyshare = try await alice.keygen()
        #expect(try cluster.storeA.owner(keyId: keyshare.keyId) == "alice")
        #expect(try cluster.storeB.owner(keyId: keyshare.keyId) == "alice")
        let message = EndToEnd.message(.ecdsa, "alice signs")
        for signer in [TrioSigner.nodeA, .nodeB] {
            let signature = try await alice.signature(keyshare: keyshare, message: message, signer: signer)
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        }
        let bob = Self.session(.ecdsa, cluster, device: device, token: Self.jwt(sub: "bob"), storage: storage)
        for signer in [TrioSigner.nodeA, .nodeB] {
            await Self.expectNotHere { _ = try await bob.signature(keyshare: keyshare, message: message, signer: signer) }
        }
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) { _ = try await bob.keyRefresh(keyshare: keyshare) }
        let signOnly = Self.session(.ecdsa, cluster, device: device, token: Self.jwt(sub: "alice", scope: "sign"), storage: storage)
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await signOnly.keyRefresh(keyshare: keyshare) }
        let signature = try await signOnly.signature(keyshare: keyshare, message: message, signer: .nodeB)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        #expect(try cluster.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))

        let child = try await alice.hardDerivation(keyshare: keyshare, path: "m/44'/0'/1'")
        #expect(try cluster.storeA.owner(keyId: child.keyId) == "alice")
        #expect(try cluster.storeB.owner(keyId: child.keyId) == "alice")
        await Self.expectNotHere { _ = try await bob.signature(keyshare: child, message: message) }
        await cluster.stop()
    }

    /// Security review findings 2 and 8: every operation on an existing key — export, preSign,
    /// hardDerivation and the preSignFinal POST (at A and, relayed, at B) — refuses a token of another
    /// subject, even one holding every scope; the refused final consumes nothing. Since security review 2,
    /// finding 9, the refusal is the one for a key or presignature the nodes do not hold.
    @Test func anotherSubjectCannotExportPresignDeriveOrFinish() async throws {
        let cluster = try Self.cluster()
        let device = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        let scopes = "keygen sign preSign preSignFinal export hardDerivation refresh reconcile"
        let alice = Self.session(.ecdsa, cluster, device: device, token: Self.jwt(sub: "alice", scope: scopes), storage: storage)
        let bob = Self.session(.ecdsa, cluster, device: device, token: Self.jwt(sub: "bob", scope: scopes), storage: storage)
        let keyshare = try await alice.keygen()
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) { _ = try await bob.export(keyshare: keyshare) }
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) {
            _ = try await bob.hardDerivation(keyshare: keyshare, path: "m/1'")
        }
        let message = EndToEnd.message(.ecdsa, "presigned")
        for signer in [TrioSigner.nodeA, .nodeB] {
            await Self.expectNotHere { _ = try await bob.preSignature(keyshare: keyshare, signer: signer) }
            let presignature = try await alice.preSignature(keyshare: keyshare, signer: signer)
            await #expect(throws: SilentShardError.presignatureNotFound, "preSignFinal via \(signer)") {
                _ = try await bob.preSignatureFinal(preSignature: presignature, message: message)
            }
            let signature = try await alice.preSignatureFinal(preSignature: presignature, message: message)
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        }
        // PRESIG_QUERY (session.md §8.6) is authorized like a preSignFinal: to bob, each node answers as for a key it
        // does not hold (every id unknown, so bob's app drops its records) and the nodes keep everything.
        let kept = [try await alice.preSignature(keyshare: keyshare, signer: .nodeA),
                    try await alice.preSignature(keyshare: keyshare, signer: .nodeB)]
        #expect(Set(try await alice.reconcilePreSignatures(keyshare: keyshare).map(\.id)) == Set(kept.map(\.id)))
        #expect(try await bob.reconcilePreSignatures(keyshare: keyshare).isEmpty)
        #expect(try cluster.storeA.presignatureCount(keyId: keyshare.keyId) == 1)
        #expect(try cluster.storeB.presignatureCount(keyId: keyshare.keyId) == 1)
        await cluster.stop()
    }

    /// A token bound to a device key refuses SETUPs signed by another device key (any operation).
    @Test func deviceBindingIsEnforcedAtSetup() async throws {
        let cluster = try Self.cluster()
        let device = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        let identity = try DeviceKey(signer: device).identity
        let bound = Self.session(.eddsa, cluster, device: device, token: Self.jwt(sub: "carol", binding: identity),
                                 storage: storage)
        let keyshare = try await bound.keygen()
        let message = EndToEnd.message(.eddsa, "bound")
        let signature = try await bound.signature(keyshare: keyshare, message: message)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        let otherIdentity = try DeviceKey(signer: SoftwareEd25519MessageSigner()).identity
        let misbound = Self.session(.eddsa, cluster, device: device, token: Self.jwt(sub: "carol", binding: otherIdentity),
                                    storage: storage)
        await #expect(throws: SilentShardError.authorizationDenied) {
            _ = try await misbound.signature(keyshare: keyshare, message: message)
        }
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await misbound.keygen() }
        await cluster.stop()
    }

    /// session.md §9.3: recover with a NEW device key needs a token with `device_binding` = the new key, the
    /// explicit scope `recover`, and the owner's subject; each node checks; the new key replaces the
    /// old one at both nodes in the commit transaction, after which the old device key is refused.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func recoverWithANewDeviceKey(algorithm: Keyshare.Algorithm) async throws {
        let cluster = try Self.cluster()
        let oldDevice = SoftwareEd25519MessageSigner()
        let original = try await Self.session(algorithm, cluster, device: oldDevice, token: Self.jwt(sub: "dave")).keygen()
        let newDevice = SoftwareEd25519MessageSigner()
        let newIdentity = try DeviceKey(signer: newDevice).identity
        func attempt(_ token: String) async throws -> Keyshare {
            try await Self.session(algorithm, cluster, device: newDevice, token: token)
                .recovery(keysharePublicKey: original.publicKey)
        }
        // Without a binding, without the explicit scope: FORBIDDEN; another subject: as a key not held (security
        // review 2, finding 9).
        for token in [Self.jwt(sub: "dave", scope: "recover sign"),
                      Self.jwt(sub: "dave", scope: "sign", binding: newIdentity),
                      Self.jwt(sub: "dave", binding: newIdentity)] {
            await #expect(throws: SilentShardError.authorizationDenied) { _ = try await attempt(token) }
        }
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) {
            _ = try await attempt(Self.jwt(sub: "eve", scope: "recover sign", binding: newIdentity))
        }
        #expect(try Self.device(cluster.storeA, original.keyId) == (try DeviceKey(signer: oldDevice).identity))
        #expect(try cluster.storeA.share(keyId: original.keyId)?.gen == [UInt8](original.generation))

        let token = Self.jwt(sub: "dave", scope: "recover sign", binding: newIdentity)
        let storage = InMemoryStorageClient()
        let session = Self.session(algorithm, cluster, device: newDevice, token: token, storage: storage)
        let recovered = try await session.recovery(keysharePublicKey: original.publicKey)
        #expect(recovered.publicKey == original.publicKey && recovered.generation != original.generation)
        #expect(try Self.device(cluster.storeA, original.keyId) == newIdentity)
        #expect(try Self.device(cluster.storeB, original.keyId) == newIdentity)
        #expect(try cluster.storeA.owner(keyId: original.keyId) == "dave")
        for signer in [TrioSigner.nodeA, .nodeB] {
            let message = EndToEnd.message(algorithm, "new device \(signer)")
            let signature = try await session.signature(keyshare: recovered, message: message, signer: signer)
            #expect(try EndToEnd.verifies(signature, message: message, keyshare: recovered))
        }
        // The old device key is no longer registered at either node.
        let old = Self.session(algorithm, cluster, device: oldDevice, token: Self.jwt(sub: "dave"))
        for signer in [TrioSigner.nodeA, .nodeB] {
            await #expect(throws: SilentShardError.deviceNotRegistered) {
                _ = try await old.signature(keyshare: recovered, message: EndToEnd.message(algorithm, "old"),
                                            signer: signer)
            }
        }
        await cluster.stop()
    }

    /// Security review finding 1: a hard-derived child was committed as a key of its own, bound to the
    /// device that derived it, and a recover (or refresh) of the parent touched only the parent's rows.
    /// So the holder of the stolen old device key and the old child share kept signing, presigning and
    /// exporting the child after the user recovered onto a new device — and since child − δ is the parent
    /// key (δ is known to every participant), exporting the child gave away the parent. Now the parent's
    /// commit of a new generation retires every child (shares, presignatures, owner) at each node in the
    /// same transaction; the app derives its children again from the new generation.
    @Test func childrenDoNotOutliveTheParentsRecoveryOrRefresh() async throws {
        let cluster = try Self.cluster()
        let oldDevice = SoftwareEd25519MessageSigner()
        let scopes = "keygen sign preSign preSignFinal export hardDerivation refresh reconcile"
        let stolen = Self.session(.ecdsa, cluster, device: oldDevice, token: Self.jwt(sub: "dave", scope: scopes))
        let parent = try await stolen.keygen()
        let child = try await stolen.hardDerivation(keyshare: parent, path: "m/44'/60'/0'")
        let earlyPresignatures = [try await stolen.preSignature(keyshare: child, signer: .nodeA),
                                  try await stolen.preSignature(keyshare: child, signer: .nodeB)]

        // The user recovers the parent onto a new device.
        let newDevice = SoftwareEd25519MessageSigner()
        let newIdentity = try DeviceKey(signer: newDevice).identity
        let user = Self.session(.ecdsa, cluster, device: newDevice,
                                token: Self.jwt(sub: "dave", scope: "recover " + scopes, binding: newIdentity))
        let recovered = try await user.recovery(keysharePublicKey: parent.publicKey)

        // Everything the old device could do with the child is refused at both nodes: the nodes have no
        // share of it any more, and tell the key's owner it was retired and where to derive it again
        // (KEY_RETIRED, spec proposal P7) — which helps only a device the parent is registered to.
        let message = EndToEnd.message(.ecdsa, "stolen child")
        let retired = SilentShardError.keyRetired(keyId: nil, parentKeyId: parent.keyId, path: "m/44'/60'/0'")
        for signer in [TrioSigner.nodeA, .nodeB] {
            await #expect(throws: retired, "sign via \(signer)") {
                _ = try await stolen.signature(keyshare: child, message: message, signer: signer)
            }
            await #expect(throws: retired, "presign via \(signer)") {
                _ = try await stolen.preSignature(keyshare: child, signer: signer)
            }
        }
        for presignature in earlyPresignatures {
            await #expect(throws: SilentShardError.presignatureNotFound, "finish a presignature made before the recovery") {
                _ = try await stolen.preSignatureFinal(preSignature: presignature, message: message)
            }
        }
        await #expect(throws: retired, "export the child") {
            _ = try await stolen.export(keyshare: child)
        }
        for store in [cluster.storeA, cluster.storeB] {
            #expect(try store.share(keyId: child.keyId) == nil)
            #expect(try store.presignatureCount(keyId: child.keyId) == 0)
        }

        // The user derives the child again from the recovered parent: the same key, a new generation, and
        // only the new device can use it.
        let again = try await user.hardDerivation(keyshare: recovered, path: "m/44'/60'/0'")
        #expect(again.keyId == child.keyId && again.publicKey == child.publicKey && again.generation != child.generation)
        let signature = try await user.signature(keyshare: again, message: message, signer: .nodeB)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: again))
        await #expect(throws: SilentShardError.deviceNotRegistered) {
            _ = try await stolen.signature(keyshare: again, message: message, signer: .nodeA)
        }

        // A refresh of the parent retires the child too (its shares lie on the old polynomial); the app is
        // told, typed, which parent and path to derive it from again, and does so.
        let refreshed = try await user.keyRefresh(keyshare: recovered)
        var toldParent: String?, toldPath: String?
        do {
            _ = try await user.signature(keyshare: again, message: message, signer: .nodeA)
            Issue.record("a retired child signed")
        } catch {
            if case .keyRetired(_, let parentKeyId, let path) = error {
                toldParent = parentKeyId
                toldPath = path
            }
        }
        #expect(toldParent == refreshed.keyId && toldPath == "m/44'/60'/0'")
        let third = try await user.hardDerivation(keyshare: refreshed, path: toldPath ?? "")
        #expect(third.publicKey == child.publicKey)
        let last = try await user.signature(keyshare: third, message: message, signer: .nodeA)
        #expect(try EndToEnd.verifies(last, message: message, keyshare: third))
        await cluster.stop()
    }
}
