@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// The error `body` throws, or nil.
func failure(_ body: () async throws(SilentShardError) -> Void) async -> SilentShardError? {
    do { try await body() } catch { return error }
    return nil
}

@Suite("Trio session: app ↔ node A (relay) ↔ node B over in-memory pipes", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioSessionTests {
    /// Trio's own checks of a keygen (the flow of both modes: `KeygenSignRefreshTests`): the group id, the
    /// peer's COMMITTED report, the three shares of one key (any two sign, in process), and S = {0, 2} — B
    /// co-signing at a soft path while A only relays.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func keygenSharesCombineAndBSignsThroughTheRelay(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        #expect(keyshare.groupId == Data(fixture.groupID))
        let shareA = try #require(try fixture.storeA.share(keyId: keyshare.keyId))
        let shareB = try #require(try fixture.storeB.share(keyId: keyshare.keyId))
        #expect(await fixture.peer.reports().last == .committed(keyId: keyshare.keyId, gen: keyshare.gen))

        // The node shares and the app's share are three shares of one key: any two sign (in process).
        try checkSharesCombine(app: keyshare, nodeA: shareA, nodeB: shareB)

        // Serialization round trip keeps the group id.
        #expect(try Keyshare(serialized: keyshare.serialized()) == keyshare)

        // S = {0, 2}: A only relays.
        let other = testMessage(algorithm, "trio with B")
        let viaB = try await fixture.session.signature(keyshare: keyshare, message: other, chainPath: "m/7/1", signer: .nodeB)
        if algorithm == .ecdsa {
            let point = try DKLsBIP32.deriveChildPublicKey(keyshare: try keyshare.dklsKeyshare(),
                                                           path: try DerivationPath("m/7/1")).publicKey
            guard let r = viaB.r, let s = viaB.s, let v = viaB.recoveryId else { Issue.record("no r/s"); return }
            let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
            #expect(Secp256k1.ECDSA.verify(raw, hash: [UInt8](other), publicKey: point))
            #expect(try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](other)) == point)
        } else {
            let frost = try keyshare.frostKeyshare()
            let child = try FROST.Derivation(publicKey: frost.publicKey, chainCode: frost.chainCode, path: [7, 1]).publicKey
            let key = try Ed25519.VerifyingKey(bytes: child.bytes)
            #expect(key.isValidSignature([UInt8](viaB.rawRepresentation), for: [UInt8](other)))
        }
        #expect(fixture.client.reports.last == .relayed(completed: true))
        #expect(await fixture.peer.reports().last == .signed(confirmed: true))
    }

    /// Node B certified for another group: the app refuses the pair (certificateGroupMismatch) before
    /// any protocol traffic; nothing is stored.
    @Test func nodeBOfAnotherGroup() async throws {
        let fixture = try TrioFixture(algorithm: .eddsa, groupB: SecureRandom.bytes(count: 16))
        do {
            _ = try await fixture.session.keygen()
            Issue.record("keygen succeeded")
        } catch {
            // B refuses A's LINK_OPEN (other group) → A answers PEER_UNAVAILABLE.
            #expect(error == .peerUnavailable(party: .node(1)))
        }
        #expect(fixture.storage.writes.isEmpty)
    }

    /// Node B unreachable: A answers REJECT(PEER_UNAVAILABLE); keygen fails with a typed error and
    /// nothing is staged or promoted anywhere. Signing with S = {0, 1} still works without B.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func nodeBDown(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        fixture.peer.down.withLock { $0 = true }
        do {
            _ = try await fixture.session.keyRefresh(keyshare: keyshare)
            Issue.record("refresh succeeded without B")
        } catch {
            #expect(error == .peerUnavailable(party: .node(1)))
        }
        do {
            _ = try await fixture.session.signature(keyshare: keyshare, message: testMessage(algorithm, "x"), signer: .nodeB)
            Issue.record("signing with B succeeded without B")
        } catch {
            #expect(error == .peerUnavailable(party: .node(1)))
        }
        // Nothing changed: the app's record and both nodes still hold the keygen generation only.
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil)
        #expect(try fixture.storeA.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        #expect(try fixture.storeA.status(keyId: keyshare.keyId).preparedGen == nil)
        let message = testMessage(algorithm, "A alone")
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message)
        #expect(try verify(signature, message: message, keyshare: keyshare))
    }

    /// B hangs (the link opens, nothing comes back): A gives up at its frame deadline and answers
    /// REJECT(PEER_UNAVAILABLE); the app gets a typed error, nothing is staged.
    @Test func silentNodeB() async throws {
        let fixture = try TrioFixture(algorithm: .eddsa, frameTimeout: .milliseconds(500))
        fixture.peer.silent.withLock { v in v = true }
        let error = await failure { () throws(SilentShardError) in _ = try await fixture.session.keygen() }
        #expect(error == .peerUnavailable(party: .node(1)))
        #expect(fixture.storage.writes.isEmpty)
        #expect(fixture.client.reports == [.rejected(.peerUnavailable)])
    }

    /// B dies mid-session (after the ACCEPTs, during the protocol): A answers REJECT(PEER_UNAVAILABLE)
    /// after its ACCEPT (session.md §6.1 rule 4); the app gets a typed error and nothing is staged or promoted.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func nodeBDiesMidSession(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        // A's sends on the link: LINK_OPEN, SETUP, A's ACCEPT, then protocol traffic: die at the 4th.
        fixture.peer.dieAfter.withLock { v in v = 3 }
        let error = await failure { () throws(SilentShardError) in _ = try await fixture.session.keygen() }
        #expect(error == .peerUnavailable(party: .node(1)))
        #expect(fixture.storage.writes.isEmpty)
        for report in await fixture.peer.reports() {
            if case .committed = report { Issue.record("B committed") }
        }
        #expect(fixture.client.reports.count == 1)
        for report in fixture.client.reports {
            if case .committed = report { Issue.record("A committed") }
        }
    }

    /// Hard derivation (ECDSA): all three parties derive the child of m/44'/0'/7; it is a new key
    /// (own key id, committed at both nodes, promoted at the app) that both signer sets sign with;
    /// the parent is unchanged. EdDSA sessions refuse it.
    @Test func hardDerivationThenSignWithTheChild() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let parent = try await fixture.session.keygen()
        let child = try await fixture.session.hardDerivation(keyshare: parent, path: "m/44'/0'/7")
        #expect(child.keyId != parent.keyId && child.publicKey != parent.publicKey)
        #expect(child.mode == .trio && child.partyCount == 3 && child.groupId == parent.groupId)
        #expect(try fixture.storeA.share(keyId: child.keyId)?.gen == [UInt8](child.generation))
        #expect(try fixture.storeB.share(keyId: child.keyId)?.gen == [UInt8](child.generation))
        #expect(try fixture.storeA.share(keyId: parent.keyId)?.gen == [UInt8](parent.generation))
        let record = try #require(try await fixture.storage.read(keyId: child.keyId))
        #expect(record.staged == nil && record.current != nil)
        // The nodes' child shares are shares of the child key (A + B sign in process).
        try checkSharesCombine(app: child, nodeA: try #require(try fixture.storeA.share(keyId: child.keyId)),
                               nodeB: try #require(try fixture.storeB.share(keyId: child.keyId)))
        for signer in [TrioSigner.nodeA, .nodeB] {
            let message = testMessage(.ecdsa, "hard child \(signer)")
            let signature = try await fixture.session.signature(keyshare: child, message: message, signer: signer)
            #expect(try verify(signature, message: message, keyshare: child))
        }
        // The same path again gives the same child (idempotent at every party).
        let again = try await fixture.session.hardDerivation(keyshare: parent, path: "m/44'/0'/7")
        #expect(again == child)
        let message = testMessage(.ecdsa, "parent still signs")
        #expect(try verify(try await fixture.session.signature(keyshare: parent, message: message), message: message,
                           keyshare: parent))
        let eddsa = try TrioFixture(algorithm: .eddsa)
        let key = try await eddsa.session.keygen()
        let refused = await failure { () throws(SilentShardError) in _ = try await eddsa.session.hardDerivation(keyshare: key, path: "m/1'") }
        #expect(refused == .unsupportedOperation)
    }

    /// Node A lost its share: it answers SIGNER_UNAVAILABLE (session.md §6.3) and `signature` signs with B.
    @Test func signerFallbackToB() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        try fixture.storeA.deleteKey(keyId: keyshare.keyId, party: "test")
        let message = testMessage(.ecdsa, "fallback")
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message)
        #expect(try verify(signature, message: message, keyshare: keyshare))
        #expect(fixture.client.reports.suffix(2) == [.rejected(.signerUnavailable), .relayed(completed: true)])
    }

    /// A relay that alters a frame it forwards to B (here: B's copy of the app's SETUP-following
    /// traffic): B's own checks catch it, the session aborts with a typed error, nothing is promoted.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func tamperedRelayedFrame(algorithm: Keyshare.Algorithm) async throws {
        // The first protocol frame of the app's that A forwards to B gets its authenticator flipped.
        let tampered = LockedValue(false)
        let fixture = try TrioFixture(algorithm: algorithm, tamperToB: { _, data in
            guard !tampered.withLock({ v in v }), let frames = try? Frame.parseBundle([UInt8](data)),
                  let index = frames.firstIndex(where: {
                      $0.header.sender == 0 && ($0.header.kind == .broadcast || $0.header.kind == .pointToPoint)
                  })
            else { return data }
            tampered.withLock { v in v = true }
            var out: [UInt8] = []
            for (i, frame) in frames.enumerated() {
                var bytes = frame.encoded()
                if i == index { bytes[bytes.count - 1] ^= 0x01 }
                out += bytes
            }
            return Data(out)
        })
        do {
            _ = try await fixture.session.keygen()
            Issue.record("keygen succeeded over a tampering relay")
        } catch {
            // B's own check fails (bad authenticator on the app's frame); its ABORT reaches the app.
            #expect(error == .messageAuthenticationFailed(party: .node(2)))
        }
        #expect(tampered.withLock { v in v })
        #expect(await fixture.peer.reports() == [.failed(.messageAuthenticationFailed(party: .app))])
        // Nothing promoted: no current share at the app; no CURRENT share at either node.
        for write in fixture.storage.writes { #expect(write.current == nil) }
        let keyIds = Set(fixture.storage.writes.map(\.keyId))
        for keyId in keyIds {
            #expect(try fixture.storeA.share(keyId: keyId) == nil)
            #expect(try fixture.storeB.share(keyId: keyId) == nil)
        }
        for report in await fixture.peer.reports() {
            if case .committed = report { Issue.record("B committed") }
        }
        for report in fixture.client.reports {
            if case .committed = report { Issue.record("A committed") }
        }
    }

    /// session.md §6.1 rule 2: a frame arriving on the app's link that claims to come from B is refused by A
    /// (UNEXPECTED, never forwarded): every frame A puts on the link to B is the app's or A's own.
    @Test func relayRefusesAFrameWhoseSenderDoesNotMatchItsLink() async throws {
        let toB = LockedValue<[PartyIndex]>([])
        let fixture = try TrioFixture(algorithm: .ecdsa, tamperToB: { _, data in
            if let frames = try? Frame.parseBundle([UInt8](data)) { toB.withLock { $0 += frames.map(\.header.sender) } }
            return data
        })
        let forged = LockedValue(false)
        fixture.client.rewriteSend.withLock { hook in
            hook = { data in
                guard !forged.withLock({ v in v }), var bytes = Optional([UInt8](data)),
                      let frames = try? Frame.parseBundle(bytes), frames.first?.header.kind == .broadcast
                else { return data }
                forged.withLock { v in v = true }
                bytes[2] = 2  // the first frame's header: sender := node B
                return Data(bytes)
            }
        }
        let error = await failure { () throws(SilentShardError) in _ = try await fixture.session.keygen() }
        #expect(forged.withLock { v in v })
        #expect(error != nil)
        #expect(toB.withLock { senders in senders.allSatisfy { $0 == 0 || $0 == 1 } })
        #expect(fixture.storage.writes.isEmpty)
        for report in await fixture.peer.reports() {
            if case .committed = report { Issue.record("B committed") }
        }
        #expect(fixture.client.reports.count == 1)
        if case .failed(.protocolViolation)? = fixture.client.reports.first {} else {
            Issue.record("A: \(fixture.client.reports)")
        }
    }

    /// B's P2P frame to the app, altered on its way through A: the app's AEAD check fails
    /// (messageAuthenticationFailed), the app aborts, nothing is promoted.
    @Test func tamperedFrameFromBAtTheApp() async throws {
        // The app's reads: 0 = ACCEPTs of A and B, 1.. protocol traffic (B's R1 arrives relayed).
        let tampered = LockedValue(false)
        let fixture = try TrioFixture(algorithm: .ecdsa, tamperAppReads: { _, data in
            guard let frames = try? Frame.parseBundle([UInt8](data)),
                  let index = frames.firstIndex(where: { $0.header.kind == .pointToPoint && $0.header.sender == 2 }),
                  !tampered.withLock({ $0 })
            else { return data }
            tampered.withLock { $0 = true }
            var out: [UInt8] = []
            for (i, frame) in frames.enumerated() {
                var bytes = frame.encoded()
                if i == index { bytes[bytes.count - 1] ^= 0x01 }
                out += bytes
            }
            return Data(out)
        })
        do {
            _ = try await fixture.session.keygen()
            Issue.record("keygen succeeded with a tampered frame")
        } catch {
            #expect(error == .messageAuthenticationFailed(party: .node(2)))
        }
        #expect(tampered.withLock { v in v })
        for write in fixture.storage.writes { #expect(write.current == nil) }
        #expect(fixture.storage.writes.isEmpty)
    }

    /// The app cannot stage its share: it sends ABORT before any COMMIT (session.md §7.2 rule 4), both nodes
    /// drop their PREPARED share and log the generation as aborted; nothing is current anywhere.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func appStagingFailureAbortsAtBothNodes(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        fixture.storage.failWrites.withLock { v in v = true }
        let error = await failure { () throws(SilentShardError) in _ = try await fixture.session.keygen() }
        guard case .storage? = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
        _ = await fixture.peer.reports()
        for store in [fixture.storeA, fixture.storeB] {
            let entries = try store.auditLog()
            let prepared = entries.filter { $0.operation == "prepare" }
            #expect(prepared.count == 1)
            let keyId = try #require(prepared.first?.keyId)
            #expect(entries.contains { $0.operation == "abort" && $0.keyId == keyId })
            #expect(try store.share(keyId: keyId) == nil)
            #expect(try store.status(keyId: keyId).preparedGen == nil)
        }
        #expect(fixture.client.reports.first.map { if case .aborted = $0 { true } else { false } } == true)
    }

    /// The app's COMMIT never leaves (the connection drops): both nodes stay PREPARED (in doubt);
    /// the app's immediate reconcile sees both holding g under its D, sends COMMIT(reconcile), both
    /// commit and the app promotes.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func lostCommitRollsForwardFromPrepared(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let dropped = LockedValue(false)
        let (storeA, storeB) = (fixture.storeA, fixture.storeB)
        fixture.client.failSend.withLock { hook in
            hook = { data in
                guard !dropped.withLock({ v in v }), let frames = try? Frame.parseBundle([UInt8](data)),
                      let commit = frames.first(where: { $0.header.kind == .commit }),
                      let payload = try? CommitPayload(bytes: commit.body)
                else { return false }
                // The scenario needs both nodes PREPARED before the COMMIT is lost (the app can finish
                // first, EdDSA especially): wait for it, so the test does not depend on timing.
                let keyID = payload.keyID.hex
                for _ in 0..<500 {
                    let prepared = [storeA, storeB].allSatisfy { (try? $0.status(keyId: keyID))?.preparedGen == payload.gen.bytes }
                    if prepared { break }
                    usleep(10_000)
                }
                dropped.withLock { v in v = true }
                return true
            }
        }
        let keyshare = try await fixture.session.keygen()
        #expect(dropped.withLock { v in v })
        let gen = [UInt8](keyshare.generation)
        #expect(try fixture.storeA.share(keyId: keyshare.keyId)?.gen == gen)
        #expect(try fixture.storeB.share(keyId: keyshare.keyId)?.gen == gen)
        #expect(fixture.client.reports.first == .inDoubt(keyId: keyshare.keyId, gen: keyshare.gen))
        #expect(fixture.client.reports.last == .reconciled(keyId: keyshare.keyId, outcome: .committed))
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil && record.current != nil)
    }

    /// The COMMIT is lost and so is the first reconcile; meanwhile B dropped its PREPARED share (as
    /// GC would). Reconcile then rolls back: A tombstones g, the app discards its staged share, and
    /// a keygen has no result (`abortedKeyshare`).
    @Test func reconcileRollsBackWhenANodeLacksTheGeneration() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let failures = LockedValue(0)
        fixture.client.failSend.withLock { hook in
            hook = { data in
                guard let frames = try? Frame.parseBundle([UInt8](data)),
                      frames.contains(where: { $0.header.kind == .commit || $0.header.kind == .setup }),
                      failures.withLock({ n in n < 2 && (n > 0 || frames.contains { $0.header.kind == .commit }) })
                else { return false }
                failures.withLock { n in n += 1 }
                return true
            }
        }
        let error = await failure { () throws(SilentShardError) in _ = try await fixture.session.keygen() }
        guard case .reconcileRequired(let keyId)? = error else {
            Issue.record("expected reconcileRequired, got \(String(describing: error))")
            return
        }
        _ = await fixture.peer.reports()
        let gen = try #require(try fixture.storeB.status(keyId: keyId).preparedGen)
        #expect(try fixture.storeA.status(keyId: keyId).preparedGen == gen)
        try fixture.storeB.abort(keyId: keyId, gen: gen, party: "test: staged_ttl")
        let settled = await failure { () throws(SilentShardError) in _ = try await fixture.session.reconcileKeyshare(keyId: keyId) }
        #expect(settled == .abortedKeyshare(keyId: keyId))
        #expect(try fixture.storeA.status(keyId: keyId).preparedGen == nil)
        #expect(try fixture.storeA.decision(keyId: keyId, gen: gen) == .aborted)
        #expect(try fixture.storeA.share(keyId: keyId) == nil)
        #expect(try await fixture.storage.read(keyId: keyId) == nil)
        // Idempotent: a second reconcile finds no record.
        let again = await failure { () throws(SilentShardError) in _ = try await fixture.session.reconcileKeyshare(keyId: keyId) }
        #expect(again == .keyNotFound(keyId: keyId))
    }

    /// The app cannot stage a refresh and its ABORT is lost: both nodes keep the refreshed share
    /// PREPARED (it blocks share changes: RECONCILE_REQUIRED). The next refresh reconciles first —
    /// the app has nothing staged, so it rolls the orphan back (both nodes tombstone it) — and then
    /// succeeds.
    @Test func orphanPreparedIsRolledBackBeforeTheNextRefresh() async throws {
        let fixture = try TrioFixture(algorithm: .eddsa)
        let keyshare = try await fixture.session.keygen()
        fixture.storage.failWrites.withLock { v in v = true }
        fixture.client.failSend.withLock { hook in
            hook = { data in (try? Frame.parseBundle([UInt8](data)))?.contains { $0.header.kind == .abort } ?? false }
        }
        let first = await failure { () throws(SilentShardError) in _ = try await fixture.session.keyRefresh(keyshare: keyshare) }
        guard case .storage? = first else {
            Issue.record("expected a storage error, got \(String(describing: first))")
            return
        }
        _ = await fixture.peer.reports()
        let orphan = try #require(try fixture.storeA.status(keyId: keyshare.keyId).preparedGen)
        #expect(try fixture.storeB.status(keyId: keyshare.keyId).preparedGen == orphan)
        fixture.storage.failWrites.withLock { v in v = false }
        fixture.client.failSend.withLock { hook in hook = nil }

        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.generation != keyshare.generation && [UInt8](refreshed.generation) != orphan)
        for store in [fixture.storeA, fixture.storeB] {
            #expect(try store.decision(keyId: keyshare.keyId, gen: orphan) == .aborted)
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](refreshed.generation))
            #expect(try store.status(keyId: keyshare.keyId).preparedGen == nil)
        }
        #expect(fixture.client.reports.contains(.rejected(WireCode.reconcileRequired)))
        let message = testMessage(.eddsa, "after the orphan")
        #expect(try verify(try await fixture.session.signature(keyshare: refreshed, message: message, signer: .nodeB),
                           message: message, keyshare: refreshed))
    }

    /// Checks that the three committed shares are shares of one key: every pair signs a verified
    /// signature (in process, with the protocol runners).
    private func checkSharesCombine(app: Keyshare, nodeA: NodeKeyshare, nodeB: NodeKeyshare) throws {
        let a = try Keyshare(algorithm: app.algorithm, mode: .trio, protocolBytes: try NodeShareBlob(bytes: nodeA.bytes).protocolBytes)
        let b = try Keyshare(algorithm: app.algorithm, mode: .trio, protocolBytes: try NodeShareBlob(bytes: nodeB.bytes).protocolBytes)
        #expect(a.party == 1 && b.party == 2)
        #expect(a.publicKey == app.publicKey && b.publicKey == app.publicKey)
        guard app.algorithm == .ecdsa else { return }
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let hash = SHA256.hash(Array("nodes only".utf8))
        let signature = try DKLsInProcess.sign([try a.dklsKeyshare(), try b.dklsKeyshare()], messageHash: hash, using: &rng)
        let key = try Secp256k1.Point(compressed: [UInt8](app.publicKey))
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: key))
    }
}
