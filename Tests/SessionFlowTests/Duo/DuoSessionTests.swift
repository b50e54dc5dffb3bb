import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

@Suite("Duo session: app DuoSession ↔ node NodeStepRunner over an in-memory pipe", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoSessionTests {
    @Test func malformedCloudKeyFailsBeforeConnecting() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa, cloudKeyOverride: "not-a-key")
        await #expect(throws: SilentShardError.invalidConfiguration(reason: "cloudVerifyingKey")) {
            _ = try await fixture.session.keygen()
        }
        #expect(fixture.client.reports.isEmpty)
    }

    /// A flipped bit in the node's first P2P frame (the last bytes of its first bundle: the AEAD tag)
    /// is BAD_AUTHENTICATOR at the app, reported as `messageAuthenticationFailed` naming the frame's
    /// sender (node 1); nothing is stored on either side.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func tamperedFrameIsATypedErrorNamingTheParty(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try DuoFixture(algorithm: algorithm) { index, data in
            guard index == 0, !data.isEmpty else { return data }
            var bytes = [UInt8](data)
            bytes[bytes.count - 1] ^= 0x01
            return Data(bytes)
        }
        await #expect(throws: SilentShardError.messageAuthenticationFailed(party: .node(1))) {
            _ = try await fixture.session.keygen()
        }
        #expect(fixture.storage.writes.isEmpty)
        if case .failed? = fixture.client.reports.last {} else { Issue.record("node reports \(fixture.client.reports)") }
    }

    @Test func ecdsaMessageMustBe32Bytes() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        await #expect(throws: SilentShardError.invalidInput(reason: "ECDSA message must be a 32-byte hash")) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Data(count: 31))
        }
    }

    @Test func keyshareDecodingNeverTraps() {
        for bytes in [Data(), Data("SSKS".utf8), Data([0x53, 0x53, 0x4B, 0x53, 1, 1, 1, 0, 0, 0, 5, 1, 2, 3, 4, 5]),
                      Data([0x53, 0x53, 0x4B, 0x53, 9, 1, 1, 0, 0, 0, 0]), Data(repeating: 0xFF, count: 64)] {
            #expect(throws: SilentShardError.self) { _ = try Keyshare(serialized: bytes) }
        }
    }
}

@Suite("Duo session: flights (session.md §5.2)", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoFlightTests {
    /// Flight F1 is the SETUP with the app's first-round broadcast when that round is short (FROST
    /// keygen and sign: one round trip less); a DKLs23 first round follows the ACCEPT.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func setupCarriesThePrecomputedFirstRound(algorithm: Keyshare.Algorithm) async throws {
        let sent = LockedValue<[Data]>([])
        let fixture = try DuoFixture(algorithm: algorithm, tamperSend: { _, data in
            sent.withLock { $0.append(data) }
            return data
        })
        let keyshare = try await fixture.session.keygen()
        let keygenMessages = sent.withLock { $0 }
        sent.withLock { $0 = [] }
        let message = algorithm == .ecdsa ? Data(SHA256.hash(Array("flights".utf8))) : Data("flights".utf8)
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message)
        #expect(algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                    : try verifyEdDSA(signature, message: message, keyshare: keyshare))
        for messages in [keygenMessages, sent.withLock { $0 }] {
            let first = try Frame.parseBundle([UInt8](try #require(messages.first)))
            let kinds = first.map(\.header.kind)
            #expect(kinds == (algorithm == .eddsa ? [.setup, .broadcast] : [.setup]))
            #expect(first.dropFirst().allSatisfy { $0.header.sender == 0 && $0.header.seq == 1 })
        }
    }
}

@Suite("Duo session: authorization and in-doubt commits", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoSessionCommitTests {
    /// session.md §9.2: a SETUP on an existing key signed by another device key is refused (DEVICE_NOT_REGISTERED).
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func anotherDeviceCannotUseTheKey(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try DuoFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        let intruder = fixture.session(algorithm)
        let message = algorithm == .ecdsa ? Data(repeating: 7, count: 32) : Data("m".utf8)
        await #expect(throws: SilentShardError.deviceNotRegistered) {
            _ = try await intruder.signature(keyshare: keyshare, message: message)
        }
        #expect(fixture.client.reports.last == .rejected(.deviceNotRegistered))
    }

    /// The app's COMMIT is destroyed in transit: the node never commits; the app, in doubt, reconciles:
    /// the node tombstones the generation (OUTCOME aborted) and the app drops its staged first share.
    @Test(arguments: [(Keyshare.Algorithm.ecdsa, 4), (.eddsa, 2)])  // FROST: SETUP carries round 1 (session.md §5.2 F1)
    func lostCommitIsRolledBack(algorithm: Keyshare.Algorithm, commitSend: Int) async throws {
        let fixture = try DuoFixture(algorithm: algorithm, tamperSend: { index, data in
            index == commitSend ? Data([0xFF]) : data
        })
        var thrown: SilentShardError?
        do { _ = try await fixture.session.keygen() } catch { thrown = error }
        guard case .abortedKeyshare(let keyId)? = thrown else {
            Issue.record("expected abortedKeyshare, got \(String(describing: thrown))")
            return
        }
        #expect(try await fixture.storage.read(keyId: keyId) == nil)
        #expect(try fixture.store.share(keyId: keyId) == nil)
        // The node logged the staged generation as aborted (a late commit of it is impossible).
        let staged = try #require(fixture.storage.writes.first?.staged)
        let stagedShare = try Keyshare(algorithm: algorithm, mode: .duo, protocolBytes: [UInt8](staged.bytes))
        #expect(try fixture.store.decision(keyId: keyId, gen: [UInt8](stagedShare.generation)) == .aborted)
        #expect(fixture.client.reports.last == .reconciled(keyId: keyId, outcome: .aborted))
    }
}

