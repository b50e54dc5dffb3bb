import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// session.md §9.1–9.2 over real sockets with the HS256 JWT verifier: the token's scopes limit the operations,
/// and a key belongs to the subject that created it — another subject, even with the registered
/// device key, is refused with FORBIDDEN; the node keeps serving.
@Suite("Duo end to end: token scopes and key ownership (JWT)", .heavy, .timeLimit(.minutes(30)))
struct OwnershipTests {
    /// The verifier's clock: tokens expire 600 s after it, and it stands still, so no token expires
    /// however long a loaded machine takes to run the test.
    static let tokenClock = ManualClock()
    static let secret = [UInt8](repeating: 0x33, count: 32)

    static func jwt(sub: String, scope: String? = nil) -> String {
        func base64url(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let exp = Int(tokenClock.seconds) + 600
        let scopeClaim = scope.map { #","scope":"\#($0)""# } ?? ""
        let header = base64url(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = base64url(Array(#"{"sub":"\#(sub)","exp":\#(exp)\#(scopeClaim)}"#.utf8))
        let input = header + "." + payload
        return input + "." + base64url(SHA256.hmac(key: secret, data: Array(input.utf8)))
    }

    /// Sessions of one device and one app storage against `node`, one per token.
    static func sessions(_ node: DuoNode) -> @Sendable (String) -> DuoSession {
        let cloudKey = Hex.encode(node.key.verifyingKey.bytes), port = node.server.port
        let signer = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        return { token in
            SilentShard.ECDSA.duoInitiator(
                messageSigner: signer, cloudVerifyingKey: cloudKey,
                websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)", authenticationToken: token),
                storageClient: storage)
        }
    }

    @Test func scopesAndOwnersAreEnforced() async throws {
        let node = try DuoNode.start(verifier: JWTHS256Verifier(secret: Self.secret, now: Self.tokenClock.date))
        let session = Self.sessions(node)
        let alice = session(Self.jwt(sub: "alice"))
        let keyshare = try await alice.keygen()
        #expect(try node.store.owner(keyId: keyshare.keyId) == "alice")

        // Same device key, another subject: refused as a key the node does not hold (security review 2, finding 9).
        let mallory = session(Self.jwt(sub: "mallory"))
        let hash = Data(SHA256.hash(Array("ownership".utf8)))
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) { _ = try await mallory.signature(keyshare: keyshare, message: hash) }
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) { _ = try await mallory.keyRefresh(keyshare: keyshare) }

        // A token limited to signing cannot refresh or create keys, but signs.
        let signOnly = session(Self.jwt(sub: "alice", scope: "sign"))
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await signOnly.keyRefresh(keyshare: keyshare) }
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await signOnly.keygen() }
        let signature = try await signOnly.signature(keyshare: keyshare, message: hash)
        #expect(try EndToEnd.verifies(signature, message: hash, keyshare: keyshare))

        // The owner keeps full use.
        let refreshed = try await alice.keyRefresh(keyshare: keyshare)
        #expect(try node.store.owner(keyId: refreshed.keyId) == "alice")
        let again = try await alice.signature(keyshare: refreshed, message: hash)
        #expect(try EndToEnd.verifies(again, message: hash, keyshare: refreshed))
        await node.server.stop()
    }

    /// Security review finding 11: a key the node holds without an owner row (from before owners were
    /// recorded, or written around the store) served every subject — `owner == nil` read as "a key the node
    /// does not know yet". Now it serves nobody (answered as a key the node does not hold, security review 2,
    /// finding 9), and keys made without a principal (an embedding without a verifier) are owned by `anonymous`.
    @Test func aKeyWithoutAnOwnerServesNobody() async throws {
        let directory = NSTemporaryDirectory() + "silentshard-owner-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let node = try DuoNode.start(databasePath: directory + "/node.sqlite",
                                                       verifier: JWTHS256Verifier(secret: Self.secret, now: Self.tokenClock.date))
        let session = Self.sessions(node)
        let alice = session(Self.jwt(sub: "alice"))
        let keyshare = try await alice.keygen()
        let hash = Data(SHA256.hash(Array("ownerless".utf8)))
        try SQLiteConnection(path: directory + "/node.sqlite").execute("DELETE FROM key_owners")
        #expect(try node.store.ownership(keyId: keyshare.keyId) == .unowned)
        for token in [Self.jwt(sub: "alice"), Self.jwt(sub: "mallory")] {
            await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) { _ = try await session(token).signature(keyshare: keyshare, message: hash) }
        }
        await node.server.stop()
    }

    /// session.md §9.1: a token bound to a device key is good only with that device's SETUPs.
    @Test func deviceBoundTokens() async throws {
        let signer = SoftwareEd25519MessageSigner()
        let node = try DuoNode.start(verifier: BoundTokens(device: try DeviceKey(signer: signer).identity))
        func session(_ token: String) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(
                messageSigner: signer, cloudVerifyingKey: Hex.encode(node.key.verifyingKey.bytes),
                websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)", authenticationToken: token),
                storageClient: InMemoryStorageClient())
        }
        await #expect(throws: SilentShardError.authorizationDenied) { _ = try await session("other-device").keygen() }
        let keyshare = try await session("this-device").keygen()
        let hash = Data(SHA256.hash(Array("bound".utf8)))
        #expect(try EndToEnd.verifies(try await session("this-device").signature(keyshare: keyshare, message: hash),
                                                   message: hash, keyshare: keyshare))
        await node.server.stop()
    }

    /// "this-device" is bound to the test's device key, "other-device" to another key.
    struct BoundTokens: TokenVerifier {
        let device: [UInt8]
        var name: String { "bound" }
        func verify(token: String?) async throws(AuthenticationError) -> Principal {
            switch token {
            case "this-device"?: return Principal(subject: "alice", deviceBinding: device)
            case "other-device"?: return Principal(subject: "alice", deviceBinding: [0x01] + [UInt8](repeating: 7, count: 32))
            default: throw .invalidToken
            }
        }
    }
}
