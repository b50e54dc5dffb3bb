import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestTraits
import Testing
@testable import trio

/// Trio presignatures over real sockets (`docs/protocol/session.md` §8), what is checked in trio only:
/// raw FINAL_REQUESTs at each node (50 concurrent on SQLite and PostgreSQL, tampered, unknown, expired),
/// a refresh dropping both nodes' presignatures, a transport without POST, PRESIG_QUERY through A after
/// B dropped its halves. Presign, final once and status in both modes: `PresignatureOverWebSocketTests`.
@Suite("Trio presignatures over loopback WebSockets and HTTP POST: the nodes", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioPresignatureNodeTests {
    typealias Cluster = TrioCluster

    static func store(_ cluster: Cluster, _ signer: TrioSigner) -> NodeShareStore {
        signer == .nodeA ? cluster.storeA : cluster.storeB
    }

    /// The derived key P′ for `path` from the app keyshare (public derivation).
    static func derivedKey(_ keyshare: Keyshare, path: String) throws -> Secp256k1.Point {
        try DKLsBIP32.deriveChildPublicKey(keyshare: try keyshare.dklsKeyshare(), path: try DerivationPath(path)).publicKey
    }

    static func verifies(_ signature: Signature, hash: Data, key: Secp256k1.Point) throws -> Bool {
        guard let r = signature.r, let s = signature.s, let v = signature.recoveryId else { return false }
        let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
        let recovered = try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](hash))
        return Secp256k1.ECDSA.verify(raw, hash: [UInt8](hash), publicKey: key) && recovered == key
    }

    static func hash(_ text: String) -> Data { Data(SHA256.hash(Array(text.utf8))) }

    /// One raw POST of `body` to the preSignFinal route (a fresh client per call).
    static func post(_ cluster: Cluster, keyId: String, body: [UInt8]) async throws -> [UInt8] {
        let client = TrioNetworkClient(websocketConfig: WebsocketConfig(url: cluster.url, authenticationToken: "t"))
        return [UInt8](try await client.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: keyId,
                                                        body: Data(body)))
    }

    static func rejectCode(_ bytes: [UInt8]) -> WireCode? {
        guard let frame = try? Frame.parseSingle(bytes), frame.header.kind == .reject,
              let payload = try? RejectPayload(bytes: frame.body) else { return nil }
        return payload.code
    }

    /// 50 concurrent preSignatureFinal calls with one presignature: exactly one signature, 49
    /// `presignatureConsumed` (at the app). Then at the node: 50 distinct valid FINAL_REQUESTs for one
    /// presignature POSTed concurrently: exactly one FINAL_RESPONSE (a valid signature), 49
    /// PRESIG_CONSUMED; a replay of the winning request returns the same response bytes. With the
    /// nodes' stores on SQLite and on PostgreSQL (issue 10: "in both stores").
    @Test(arguments: [TrioSigner.nodeA, .nodeB], [false, true])
    func fiftyConcurrentFinalsGiveOneSignature(signer: TrioSigner, onPostgres: Bool) async throws {
        let databases = onPostgres
            ? (a: NodeStoreLocation.postgres(url: try NodeCommandPostgresTests.scratchDatabase()),
               b: NodeStoreLocation.postgres(url: try NodeCommandPostgresTests.scratchDatabase()))
            : nil
        let cluster = try TrioCluster.start(token: "t", databases: databases)
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        let key = try Self.derivedKey(keyshare, path: "m")
        // At the app: 50 concurrent calls, each with another message.
        let shared = try await session.preSignature(keyshare: keyshare, signer: signer)
        let outcomes = await withTaskGroup(of: (Data, Result<Signature, SilentShardError>).self) { group in
            for index in 0..<50 {
                group.addTask {
                    let message = Self.hash("fifty at the app \(index)")
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
        for (message, signature) in signatures { #expect(try Self.verifies(signature, hash: message, key: key)) }
        #expect(outcomes.filter { if case .failure(.presignatureConsumed) = $0.1 { true } else { false } }.count == 49)

        // At the node: 50 different valid requests for one stored half.
        let presignature = try await session.preSignature(keyshare: keyshare, signer: signer)
        let secrets = try #require(presignature.take())
        var requests: [(body: [UInt8], state: DKLsSign.FinishState, hash: [UInt8])] = []
        for index in 0..<50 {
            let hash = [UInt8](Self.hash("request \(index)"))
            let half = try DKLsPresignature.deserialize(secrets.presignature)
            let (state, finish) = try half.finish(messageHash: hash)
            let frame = try secrets.finalKeys.request(presigID: InstanceID(checked: [UInt8](presignature.id)), message: hash, finish: finish.payload)
            requests.append((frame.encoded(), state, hash))
        }
        let answers = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for (index, request) in requests.enumerated() {
                group.addTask { (index, try await Self.post(cluster, keyId: keyshare.keyId, body: request.body)) }
            }
            var all: [(Int, [UInt8])] = []
            for try await answer in group { all.append(answer) }
            return all
        }
        var winners: [Int] = []
        for (index, bytes) in answers {
            if let code = Self.rejectCode(bytes) {
                #expect(code == .presigConsumed)
                continue
            }
            let frame = try Frame.parseSingle(bytes)
            let nodeFinish = try secrets.finalKeys.openResponse(frame)
            let raw = try requests[index].state.combine([ProtocolMessage(tag: DKLsTag.signFinish, from: signer.index, to: nil,
                                                                         payload: nodeFinish)])
            #expect(Secp256k1.ECDSA.verify(raw, hash: requests[index].hash, publicKey: key))
            winners.append(index)
        }
        #expect(winners.count == 1)
        let winner = try #require(winners.first)
        let first = try #require(answers.first { $0.0 == winner }?.1)
        // Idempotent retry: the same bytes get the stored response; nothing else is consumed.
        #expect(try await Self.post(cluster, keyId: keyshare.keyId, body: requests[winner].body) == first)
        #expect(try Self.store(cluster, signer).presignatureCount(keyId: keyshare.keyId) == 0)
        await cluster.stop()
    }

    /// A tampered FINAL_REQUEST is BAD_AUTHENTICATOR and consumes nothing; an unknown presig id is
    /// PRESIG_NOT_FOUND; an expired one PRESIG_EXPIRED (node) / `presignatureExpired` (app, 60 s margin).
    @Test func tamperedUnknownAndExpired() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        for signer in [TrioSigner.nodeA, .nodeB] {
            let presignature = try await session.preSignature(keyshare: keyshare, signer: signer)
            let secrets = try #require(presignature.take())
            let hash = [UInt8](Self.hash("tamper"))
            let (_, finish) = try DKLsPresignature.deserialize(secrets.presignature).finish(messageHash: hash)
            var body = try secrets.finalKeys.request(presigID: InstanceID(checked: [UInt8](presignature.id)), message: hash, finish: finish.payload)
                .encoded()
            body[body.count - 1] ^= 1
            #expect(Self.rejectCode(try await Self.post(cluster, keyId: keyshare.keyId, body: body)) == .badAuthenticator)
            #expect(try Self.store(cluster, signer).presignatureCount(keyId: keyshare.keyId) == 1)
            var unknown = body
            unknown[FrameHeader.byteCount - 32] ^= 0xFF   // instance id = presig id
            #expect(Self.rejectCode(try await Self.post(cluster, keyId: keyshare.keyId, body: unknown)) == .presigNotFound)
        }
        // Expired: a 1 s lifetime; the app refuses at once (60 s margin), the node after expiry.
        let short = try await session.preSignature(keyshare: keyshare, signer: .nodeB, ttl: 1)
        let secrets = try #require(short.take())
        try await Task.sleep(for: .milliseconds(2_200))
        let hash = [UInt8](Self.hash("late"))
        let (_, finish) = try DKLsPresignature.deserialize(secrets.presignature).finish(messageHash: hash)
        let body = try secrets.finalKeys.request(presigID: InstanceID(checked: [UInt8](short.id)), message: hash, finish: finish.payload).encoded()
        #expect(Self.rejectCode(try await Self.post(cluster, keyId: keyshare.keyId, body: body)) == .presigExpired)
        let appSide = try await session.preSignature(keyshare: keyshare, signer: .nodeA, ttl: 30)
        await #expect(throws: SilentShardError.presignatureExpired) {
            _ = try await session.preSignatureFinal(preSignature: appSide, message: Self.hash("late"))
        }
        await cluster.stop()
    }

    /// A refresh makes the old generation's presignatures unusable (PRESIG_NOT_FOUND).
    @Test func refreshInvalidatesPresignatures() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let session = TrioCluster.session(.ecdsa, cluster: cluster, token: "t")
        let keyshare = try await session.keygen()
        let viaA = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        let viaB = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        // The commit transaction deleted the old generation's rows (session.md §8.2).
        #expect(try cluster.storeA.presignatureCount(keyId: keyshare.keyId) == 0)
        #expect(try cluster.storeB.presignatureCount(keyId: keyshare.keyId) == 0)
        for presignature in [viaA, viaB] {
            await #expect(throws: SilentShardError.presignatureNotFound) {
                _ = try await session.preSignatureFinal(preSignature: presignature, message: Self.hash("after refresh"))
            }
        }
        let fresh = try await session.preSignature(keyshare: refreshed, signer: .nodeB)
        let message = Self.hash("fresh after refresh")
        let signature = try await session.preSignatureFinal(preSignature: fresh, message: message)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: refreshed))
        await cluster.stop()
    }

    /// A custom transport without `sendPostRequest`: preSign works, preSignatureFinal is
    /// `network(.postRequestUnsupported)` (seed default), and the presignature is consumed.
    @Test func customClientWithoutPostRequest() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let client = SocketOnlyClient(inner: TrioNetworkClient(websocketConfig: WebsocketConfig(url: cluster.url,
                                                                                             authenticationToken: "t")))
        let session = SilentShard.ECDSA.trioInitiator(messageSigner: SoftwareEd25519MessageSigner(),
                                                      cloudVerifyingKey: cluster.cloudVerifyingKey,
                                                      storageClient: InMemoryStorageClient(), networkClient: client,
                                                      actionProvider: .ecdsa)
        let keyshare = try await session.keygen()
        let presignature = try await session.preSignature(keyshare: keyshare)
        await #expect(throws: SilentShardError.network(.postRequestUnsupported)) {
            _ = try await session.preSignatureFinal(preSignature: presignature, message: Self.hash("no post"))
        }
        #expect(presignature.isConsumed)
        await cluster.stop()
    }

    /// session.md §8.6 over sockets: PRESIG_QUERY through A (relayed to B over a purpose-2 link, B authorizing the
    /// forwarded token itself), PRESIG_STATUS signed by each node. B drops its halves (a ban, lifted): the
    /// app drops its records of them; A's stay.
    @Test func nodesReportWhatTheyHoldThroughA() async throws {
        let cluster = try TrioCluster.start(token: "t")
        let signer = SoftwareEd25519MessageSigner()
        let session = SilentShard.ECDSA.trioInitiator(messageSigner: signer, cloudVerifyingKey: cluster.cloudVerifyingKey,
                                                      websocketConfig: WebsocketConfig(url: cluster.url, authenticationToken: "t"),
                                                      storageClient: InMemoryStorageClient())
        let keyshare = try await session.keygen()
        let atA = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        let atB = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        #expect(Set(try await session.reconcilePreSignatures(keyshare: keyshare).map(\.id)) == [atA.id, atB.id])
        let device = [signer.keyType.rawValue] + [UInt8](signer.verifyingKey)
        #expect(try cluster.storeB.ban(deviceKey: device, reason: "test", instanceId: SecureRandom.bytes(count: 32), party: "node 2") == 1)
        #expect(try cluster.storeB.liftBan(deviceKey: device, operator: "test"))
        #expect(try await session.reconcilePreSignatures(keyshare: keyshare).map(\.id) == [atA.id])
        let message = Self.hash("still held at A")
        let signature = try await session.preSignatureFinal(preSignature: atA, message: message)
        #expect(try EndToEnd.verifies(signature, message: message, keyshare: keyshare))
        await cluster.stop()
    }
}

/// A transport that forwards the WebSocket calls and keeps the protocol's default `sendPostRequest`.
final class SocketOnlyClient: NetworkClient {
    let inner: TrioNetworkClient
    init(inner: TrioNetworkClient) { self.inner = inner }
    func connect(action: NetworkAction, params: String?) async throws { try await inner.connect(action: action, params: params) }
    func send(bytes: Data) async throws { try await inner.send(bytes: bytes) }
    func send(text: String) async throws { try await inner.send(text: text) }
    func read() async throws -> Data { try await inner.read() }
    func disconnect() async throws { try await inner.disconnect() }
}
