import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Duo export end to end, what only duo's POST has: the app builds the request, a "backend" (this test)
/// POSTs it over real loopback HTTP to the libwebsockets node (`POST /v3/{algorithm}/export`, bearer
/// credential with scope `export`), and the app combines the relayed answer into the private key — its
/// tampering, replay, garbage, credential and route checks. Export before and after a refresh in both
/// modes: `ExportTests`.
@Suite("Duo export over loopback HTTP", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoExportPostTests {
    struct Fixture {
        let node: DuoNode
        let signer = SoftwareEd25519MessageSigner()

        init() throws { node = try DuoNode.start(verifier: BackendTokens()) }

        var cloudKey: String { Hex.encode(node.key.verifyingKey.bytes) }

        func session(_ algorithm: Keyshare.Algorithm, signer: (any MessageSigner)? = nil) -> DuoSession {
            let config = WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)", authenticationToken: "app")
            let storage = InMemoryStorageClient()
            return algorithm == .ecdsa
                ? SilentShard.ECDSA.duoInitiator(messageSigner: signer ?? self.signer, cloudVerifyingKey: cloudKey,
                                                 websocketConfig: config, storageClient: storage)
                : SilentShard.EdDSA.duoInitiator(messageSigner: signer ?? self.signer, cloudVerifyingKey: cloudKey,
                                                 websocketConfig: config, storageClient: storage)
        }

        /// The backend's POST of `body` to `path` (with `?params=` when given).
        func post(_ body: Data, path: String, params: String? = nil, token: String? = "backend") async throws -> Data {
            try await node.post(body, path: path, params: params, token: token)
        }

        func post(_ request: DuoExportRequest, token: String? = "backend") async throws -> Data {
            try await post(request.body, path: request.path, params: request.params, token: token)
        }
    }

    // MARK: - Tests

    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func exportRejectsTamperingAndReplayAndSurvivesRefresh(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try Fixture()
        let session = fixture.session(algorithm)
        let keyshare = try await session.keygen()

        // The whole flow (its checks: ExportTests.exportBeforeAndAfterRefresh); later answers must equal it.
        let exported = try await session.export(keyshare: keyshare) { request in try await fixture.post(request) }

        // A soft child: x + δ belongs to the child public key the SDK derives for signing.
        let child = try await session.export(keyshare: keyshare, chainPath: "m/7/1") { try await fixture.post($0) }
        #expect(child.publicKey != keyshare.publicKey && child.chainPath == "m/7/1")
        #expect(try keyshare.childPublicKey(path: "m/7/1") == child.publicKey)
        try ExportChecks.expectSigns(child, for: child.publicKey)

        // Tampering in the header, in the encrypted share, in the signature: typed errors.
        for offset in [20, FrameHeader.byteCount + 32 * 3 + 1 + 40, -1] {
            let request = try await session.exportRequest(keyshare: keyshare)
            var response = [UInt8](try await fixture.post(request))
            let index = offset >= 0 ? offset : response.count + offset
            response[index] ^= 0x04
            #expect(throws: SilentShardError.self, "bit flip at \(index)") {
                _ = try session.exportCombine(request: request, response: Data(response))
            }
        }
        // Garbled node answer: not even a frame.
        let garbled = try await session.exportRequest(keyshare: keyshare)
        _ = try await fixture.post(garbled)
        #expect(throws: SilentShardError.malformedMessage(party: .node(1))) {
            _ = try session.exportCombine(request: garbled, response: Data([1, 2, 3]))
        }

        // The answer to another request (validly signed) is refused; its own request still combines.
        let first = try await session.exportRequest(keyshare: keyshare)
        let second = try await session.exportRequest(keyshare: keyshare)
        let firstResponse = try await fixture.post(first), secondResponse = try await fixture.post(second)
        #expect(throws: SilentShardError.protocolViolation(party: .node(1))) {
            _ = try session.exportCombine(request: first, response: secondResponse)
        }
        #expect(first.isConsumed)
        #expect(try session.exportCombine(request: second, response: secondResponse) == exported)
        _ = firstResponse

        // The same POST body twice: the node's replay store refuses the second (REPLAY), and a
        // request combines at most once.
        let replayed = try await session.exportRequest(keyshare: keyshare)
        let original = try await fixture.post(replayed)
        let again = try await fixture.post(replayed)
        #expect(throws: SilentShardError.replayDetected) { _ = try session.exportCombine(request: replayed, response: again) }
        #expect(throws: SilentShardError.invalidInput(reason: "export request already used")) {
            _ = try session.exportCombine(request: replayed, response: original)
        }

        // Garbage bodies: 400 without a frame header, a REJECT (MALFORMED) with one; the node keeps serving.
        let path = algorithm == .ecdsa ? "/v3/ecdsa/export" : "/v3/eddsa/export"
        let garbage = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) })
        await #expect(throws: NetworkError.httpStatus(400)) { _ = try await fixture.post(garbage, path: path) }
        let request = try await session.exportRequest(keyshare: keyshare)
        let truncated = Data(request.body.prefix(request.body.count - 10))
        let malformed = try Frame.parseSingle([UInt8](try await fixture.post(truncated, path: path)))
        #expect(malformed.header.kind == .reject && malformed.header.instanceID.bytes == [UInt8](request.instanceID))
        #expect(try RejectPayload(bytes: malformed.body).code == .malformed)
        #expect(try session.exportCombine(request: request, response: try await fixture.post(request)) == exported)

        // After a refresh: the old generation is STALE_GENERATION (for the audit below; the refresh itself:
        // ExportTests.exportBeforeAndAfterRefresh).
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await session.export(keyshare: keyshare) { try await fixture.post($0) }
        }
        #expect(try await session.export(keyshare: refreshed) { try await fixture.post($0) } == exported)

        // The audit log names every answer, never key material.
        let audit = try fixture.node.store.auditLog(keyId: keyshare.keyId).filter { $0.operation == "export" }
        #expect(audit.contains { $0.outcome.hasPrefix("exported") })
        #expect(audit.contains { $0.outcome == "rejected STALE_GENERATION" })
        let secretHex = Hex.encode([UInt8](exported.privateKey))
        #expect(!audit.contains { $0.outcome.contains(secretHex) })
        await fixture.node.server.stop()
    }

    /// Security review finding 2: the export POST checked only the scope, so any principal with scope
    /// `export` got another principal's key (and with it the private key) from that principal's device-
    /// signed request. Now the key's owner must be the token's subject, and a device binding must match,
    /// as for every operation on an existing key.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func anotherPrincipalsCredentialCannotExport(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try Fixture()
        let session = fixture.session(algorithm)
        let keyshare = try await session.keygen()
        #expect(try fixture.node.store.owner(keyId: keyshare.keyId) == "app")
        // Another subject's key answers like a key the node does not hold (security review 2, finding 9).
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) {
            _ = try await session.export(keyshare: keyshare) { try await fixture.post($0, token: "other-backend") }
        }
        // A credential bound to another device key: FORBIDDEN too.
        await #expect(throws: SilentShardError.authorizationDenied) {
            _ = try await session.export(keyshare: keyshare) { try await fixture.post($0, token: "bound-backend") }
        }
        // The owner's backend still exports.
        let exported = try await session.export(keyshare: keyshare) { try await fixture.post($0) }
        #expect(try ExportChecks.publicKey(of: exported) == keyshare.publicKey)
        await fixture.node.server.stop()
    }

    @Test func exportNeedsTheBackendScopeTheRegisteredDeviceAndTheRightRoute() async throws {
        let fixture = try Fixture()
        let session = fixture.session(.eddsa)
        let keyshare = try await session.keygen()

        // A credential without scope `export` (the app's own token): FORBIDDEN.
        await #expect(throws: SilentShardError.authorizationDenied) {
            _ = try await session.export(keyshare: keyshare) { try await fixture.post($0, token: "app") }
        }
        // No credential, a wrong one: 401 before any frame work (reported as a refused token).
        await #expect(throws: SilentShardError.authenticationFailed(reason: "token refused")) {
            _ = try await session.export(keyshare: keyshare) { try await fixture.post($0, token: nil) }
        }
        await #expect(throws: SilentShardError.authenticationFailed(reason: "token refused")) {
            _ = try await session.export(keyshare: keyshare) { try await fixture.post($0, token: "nope") }
        }
        // Another device key signing for this key: DEVICE_NOT_REGISTERED.
        let intruder = fixture.session(.eddsa, signer: SoftwareEd25519MessageSigner())
        await #expect(throws: SilentShardError.deviceNotRegistered) {
            _ = try await intruder.export(keyshare: keyshare) { try await fixture.post($0) }
        }
        // The ECDSA route for an EdDSA SETUP, a params hint naming another key: ROUTE_MISMATCH.
        let request = try await session.exportRequest(keyshare: keyshare)
        let wrongRoute = try await fixture.post(request.body, path: "/v3/ecdsa/export")
        #expect(throws: SilentShardError.invalidInput(reason: "ROUTE_MISMATCH")) {
            _ = try session.exportCombine(request: request, response: wrongRoute)
        }
        let hinted = try await session.exportRequest(keyshare: keyshare)
        let wrongParams = try await fixture.post(hinted.body, path: hinted.path, params: String(repeating: "ab", count: 32))
        #expect(throws: SilentShardError.invalidInput(reason: "ROUTE_MISMATCH")) {
            _ = try session.exportCombine(request: hinted, response: wrongParams)
        }
        // Without the params hint the node still serves it (the backend's URL may omit it).
        let plain = try await session.exportRequest(keyshare: keyshare)
        let exported = try session.exportCombine(request: plain, response: try await fixture.post(plain.body, path: plain.path))
        #expect(try ExportChecks.publicKey(of: exported) == keyshare.publicKey)
        // The request never shows its one-time key or the body.
        #expect(!plain.description.contains(Hex.encode([UInt8](plain.body).suffix(16))))
        #expect(String(describing: plain).contains("consumed"))
        await fixture.node.server.stop()
    }
}
