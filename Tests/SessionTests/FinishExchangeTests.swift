import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardCore
import Testing

/// Issue 34 item 3: the finish and export math both sides call (`Session/Runs/PreSignFinalExchange.swift`,
/// `DuoExportExchange.swift`), both halves in one process: the app's half and node X's half agree on a signature
/// (a key) that verifies, and a tampered or wrong-size input is a typed error, never a trap.
@Suite("Finish and export exchanges, both halves (issue 34 item 3)")
struct FinishExchangeTests {
    static let hash = [UInt8](repeating: 0x5A, count: 32)

    /// A 2-of-2 DKLs23 key and a presignature of it at both signers.
    static func dklsPresignatures() throws -> (keyshares: [DKLsKeyshare], presignatures: [DKLsPresignature]) {
        var rng = SystemRandomNumberGenerator()
        let keyshares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        return (keyshares, try DKLsInProcess.presign(keyshares, using: &rng))
    }

    /// X's half of an ECDSA finish with `requesterFinish` (X = party 1).
    static func dklsSigner(_ keyshare: DKLsKeyshare, _ presignature: DKLsPresignature, message: [UInt8] = hash,
                           requesterFinish: [UInt8]) throws -> [UInt8] {
        try PreSignFinalExchange.Signer.dkls(stored: try presignature.serialized(), keyID: keyshare.keyId,
                                           generation: keyshare.generation, local: 1, message: message,
                                           requesterFinish: requesterFinish)
    }

    @Test("ECDSA preSignFinal: the app's and X's halves give a signature under P′")
    func dklsHalvesAgree() throws {
        let (keyshares, presignatures) = try Self.dklsPresignatures()
        let stored = try presignatures[1].serialized()
        let app = try PreSignFinalExchange.Requester(dkls: presignatures[0], messageHash: Self.hash, signer: 1)
        #expect(app.finish.count == DKLsSignFinish.finishByteCount)
        let own = try PreSignFinalExchange.Signer.dkls(stored: stored, keyID: keyshares[1].keyId,
                                                     generation: keyshares[1].generation, local: 1, message: Self.hash,
                                                     requesterFinish: app.finish)
        guard case .ecdsa(let signature) = try app.signature(signerFinish: own) else { Issue.record("not ECDSA"); return }
        #expect(Secp256k1.ECDSA.verify(signature, hash: Self.hash, publicKey: keyshares[0].publicKey))
    }

    @Test("ECDSA preSignFinal: X refuses a bad app finish with a typed reason, before or after its own finish")
    func dklsSignerRefusals() throws {
        let (keyshares, presignatures) = try Self.dklsPresignatures()
        let stored = try presignatures[1].serialized()
        let app = try PreSignFinalExchange.Requester(dkls: presignatures[0], messageHash: Self.hash, signer: 1)
        func signer(_ finish: [UInt8], message: [UInt8] = Self.hash, stored: [UInt8] = stored,
                    keyID: [UInt8] = keyshares[1].keyId, local: PartyIndex = 1) -> PreSignFinalExchange.Refusal? {
            do {
                _ = try PreSignFinalExchange.Signer.dkls(stored: stored, keyID: keyID, generation: keyshares[1].generation,
                                                      local: local, message: message, requesterFinish: finish)
                return nil
            } catch {
                return error
            }
        }
        var tampered = app.finish
        tampered[70] ^= 1   // w_0
        #expect(signer(tampered) == .signatureFailed)
        #expect(signer(Array(app.finish.dropLast())) == .malformedRequest)
        #expect(signer(app.finish + [0]) == .malformedRequest)
        #expect(signer([]) == .malformedRequest)
        #expect(signer(app.finish, message: [UInt8](repeating: 1, count: 32)) == .malformedRequest, "m ≠ the outer m")
        #expect(signer(app.finish, message: Array(Self.hash.prefix(31))) == .malformedRequest)
        #expect(signer(app.finish, keyID: [UInt8](repeating: 0, count: 32)) == .storedHalfMismatch)
        #expect(signer(app.finish, local: 0) == .storedHalfMismatch)
        if case .protocolFailure? = signer(app.finish, stored: Array(stored.dropLast())) {} else {
            Issue.record("a stored half that does not decode is a protocol failure")
        }
        if case .protocolFailure? = signer(app.finish, stored: []) {} else { Issue.record("an empty stored half") }
    }

    @Test("ECDSA preSignFinal: the app refuses X's tampered or wrong-size finish with a typed error")
    func dklsRequesterRefusals() throws {
        let (keyshares, presignatures) = try Self.dklsPresignatures()
        let app = try PreSignFinalExchange.Requester(dkls: presignatures[0], messageHash: Self.hash, signer: 1)
        let own = try Self.dklsSigner(keyshares[1], presignatures[1], requesterFinish: app.finish)
        var tampered = own
        tampered[100] ^= 1   // u_1
        #expect(throws: ProtocolError.self) { _ = try app.signature(signerFinish: tampered) }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { _ = try app.signature(signerFinish: Array(own.prefix(127))) }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { _ = try app.signature(signerFinish: []) }
        var otherMessage = own
        otherMessage[40] ^= 1
        #expect(throws: ProtocolError.signingFailed(party: 1, reason: .messageMismatch)) {
            _ = try app.signature(signerFinish: otherMessage)
        }
        // A presignature is finished once: a second requester on it fails, typed.
        #expect(throws: ProtocolError.invalidInput(.presignatureAlreadyUsed)) {
            _ = try PreSignFinalExchange.Requester(dkls: presignatures[0], messageHash: Self.hash, signer: 1)
        }
        #expect(throws: ProtocolError.invalidInput(.invalidMessageHash)) {
            _ = try DKLsSignFinish(presignature: presignatures[1], messageHash: [1, 2, 3])
        }
    }

    /// A 2-of-2 FROST key and both signers' nonces.
    static func frostNonces() throws -> (keyshares: [FROST.Keyshare], nonces: [FROST.Presignature]) {
        var rng = SystemRandomNumberGenerator()
        let keyshares = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        return (keyshares, keyshares.map { FROST.Presignature(keyshare: $0, using: &rng) })
    }

    @Test("EdDSA preSignFinal: the app's and X's halves give a signature under PK′, at the root and at a soft path",
          arguments: [[], [3, 7]] as [[UInt32]])
    func frostHalvesAgree(path: [UInt32]) throws {
        let (keyshares, nonces) = try Self.frostNonces()
        let message = [UInt8]("an Ed25519 message of any length".utf8)
        let stored = try nonces[1].serialized()
        let app = try PreSignFinalExchange.Requester(frost: keyshares[0], nonces: nonces[0], signer: 1,
                                                   signerRound1: nonces[1].round1Message, message: message, path: path)
        #expect(app.finish.count == 64)
        let own = try PreSignFinalExchange.Signer.frost(keyshare: keyshares[1], nonces: stored, path: path,
                                                      requesterRound1: nonces[0].round1Message, message: message,
                                                      requesterShare: app.finish)
        guard case .eddsa(let signature) = try app.signature(signerFinish: own) else { Issue.record("not EdDSA"); return }
        let key = try FROST.Derivation(publicKey: keyshares[0].publicKey, chainCode: keyshares[0].chainCode, path: path).publicKey
        #expect(try Ed25519.VerifyingKey(bytes: key.bytes).isValidSignature(signature, for: message))
    }

    @Test("EdDSA preSignFinal: bad shares and commitments on either side are typed errors")
    func frostRefusals() throws {
        let (keyshares, nonces) = try Self.frostNonces()
        let message = [UInt8]("m".utf8)
        let stored = try nonces[1].serialized()
        let app = try PreSignFinalExchange.Requester(frost: keyshares[0], nonces: nonces[0], signer: 1,
                                                   signerRound1: nonces[1].round1Message, message: message, path: [])
        func signer(share: [UInt8], round1: [UInt8] = nonces[0].round1Message, stored: [UInt8] = stored,
                    message: [UInt8] = message) -> PreSignFinalExchange.Refusal? {
            do {
                _ = try PreSignFinalExchange.Signer.frost(keyshare: keyshares[1], nonces: stored, path: [], requesterRound1: round1,
                                                        message: message, requesterShare: share)
                return nil
            } catch {
                return error
            }
        }
        var tampered = app.finish
        tampered[40] ^= 1   // z_0
        #expect(signer(share: tampered) == .signatureFailed)
        var otherTranscript = app.finish
        otherTranscript[0] ^= 1
        #expect(signer(share: otherTranscript) == .signatureFailed)
        #expect(signer(share: Array(app.finish.prefix(63))) == .malformedRequest)
        #expect(signer(share: []) == .malformedRequest)
        #expect(signer(share: app.finish, message: [UInt8](repeating: 0, count: SessionConstants.maximumEdDSAMessageByteCount + 1))
                == .malformedRequest)
        if case .protocolFailure? = signer(share: app.finish, round1: Array(nonces[0].round1Message.prefix(63))) {} else {
            Issue.record("short commitments are a protocol failure")
        }
        if case .protocolFailure? = signer(share: app.finish, round1: [UInt8](repeating: 0xFF, count: 64)) {} else {
            Issue.record("commitments that are not points are a protocol failure")
        }
        if case .protocolFailure? = signer(share: app.finish, stored: [1, 2, 3]) {} else {
            Issue.record("stored nonces that do not decode are a protocol failure")
        }
        // The app's side: X's share tampered or of the wrong size.
        let own = try PreSignFinalExchange.Signer.frost(keyshare: keyshares[1], nonces: stored, path: [],
                                                      requesterRound1: nonces[0].round1Message, message: message,
                                                      requesterShare: app.finish)
        var bad = own
        bad[63] ^= 1
        #expect(throws: ProtocolError.self) { _ = try app.signature(signerFinish: bad) }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { _ = try app.signature(signerFinish: Array(own.prefix(10))) }
        #expect(throws: ProtocolError.self) {
            _ = try PreSignFinalExchange.Requester(frost: keyshares[0], nonces: nonces[0], signer: 1,
                                                 signerRound1: [UInt8](repeating: 0, count: 7), message: message, path: [])
        }
        guard case .eddsa(let signature) = try app.signature(signerFinish: own) else { Issue.record("not EdDSA"); return }
        #expect(signature.count == 64, "a good answer still combines after refused ones")
    }

    @Test("the exchanges hold secrets (shares, nonces, the one-time key): dump and description show none of them")
    func exchangesRevealNoSecrets() throws {
        let (keyshares, nonces) = try Self.frostNonces()
        let requester = try PreSignFinalExchange.Requester(frost: keyshares[0], nonces: nonces[0], signer: 1,
                                                           signerRound1: nonces[1].round1Message, message: [1], path: [])
        let key = try Self.duoKey(.eddsa)
        let raw = SecureRandom.bytes(count: 32)
        let oneTimeKey = try X25519.PrivateKey(rawRepresentation: raw)
        let receiver = try DuoExportExchange.Receiver(keyshare: key.app, chainPath: "m", oneTimeKey: oneTimeKey,
                                                      instanceID: .random(), setupHash: .random())
        let (_, presignatures) = try Self.dklsPresignatures()
        let finish = try DKLsSignFinish(presignature: presignatures[0], messageHash: Self.hash)
        let secrets = [Hex.encode(keyshares[0].secretShare.bytes), Hex.encode(raw)]
        let values: [Any] = [requester, receiver, finish]
        for value in values {
            #expect(Mirror(reflecting: value).children.isEmpty, "\(type(of: value))")
            var dumped = ""
            dump(value, to: &dumped)
            let description = String(describing: value)
            for secret in secrets {
                #expect(!dumped.contains(secret) && !description.contains(secret), "\(type(of: value))")
            }
        }
    }

    /// A duo key of `algorithm`: the app's `Keyshare` and the node's protocol bytes.
    static func duoKey(_ algorithm: Keyshare.Algorithm) throws -> (app: Keyshare, node: [UInt8], keyID: KeyID, gen: Generation) {
        var rng = SystemRandomNumberGenerator()
        switch algorithm {
        case .ecdsa:
            let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
            return (try Keyshare(dkls: shares[0], mode: .duo), shares[1].serialized(),
                    try #require(KeyID(shares[1].keyId)), try #require(Generation(shares[1].generation)))
        case .eddsa:
            let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
            return (Keyshare(frost: shares[0], mode: .duo), shares[1].encoded,
                    try #require(KeyID(shares[1].keyId)), try #require(Generation(shares[1].generation)))
        }
    }

    @Test("duo export POST: the node's half seals s_1, the app's half rebuilds the key at the root and at a soft path",
          arguments: [Keyshare.Algorithm.ecdsa, .eddsa], ["m", "m/1/2"])
    func exportHalvesAgree(algorithm: Keyshare.Algorithm, chainPath: String) throws {
        let key = try Self.duoKey(algorithm)
        let oneTimeKey = X25519.PrivateKey()
        let (instanceID, setupHash) = (InstanceID.random(), SetupHash.random())
        var rng = SystemRandomNumberGenerator()
        let message = try DuoExportExchange.exportMessage(algorithm: algorithm == .ecdsa ? .ecdsa : .eddsa, protocolBytes: key.node,
                                                          keyID: key.keyID, gen: key.gen, receiverKey: oneTimeKey.publicKey,
                                                          instanceID: instanceID, setupHash: setupHash, using: &rng)
        #expect(message.count == 80)
        let receiver = try DuoExportExchange.Receiver(keyshare: key.app, chainPath: chainPath, oneTimeKey: oneTimeKey,
                                                      instanceID: instanceID, setupHash: setupHash)
        let exported = try receiver.key(from: message)
        #expect(exported.chainPath == chainPath)
        if chainPath == "m" { #expect(exported.publicKey == key.app.publicKey) } else { #expect(exported.publicKey != key.app.publicKey) }

        // Tampered, truncated, extended, of another request or sealed to another key: typed, never a trap.
        var tampered = message
        tampered[50] ^= 1
        for bad in [tampered, Array(message.prefix(79)), message + [0], []] {
            #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { _ = try receiver.key(from: bad) }
        }
        let otherRequest = try DuoExportExchange.Receiver(keyshare: key.app, chainPath: chainPath, oneTimeKey: oneTimeKey,
                                                          instanceID: .random(), setupHash: setupHash)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { _ = try otherRequest.key(from: message) }
        #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) {
            _ = try DuoExportExchange.Receiver(keyshare: key.app, chainPath: "m/1'", oneTimeKey: oneTimeKey,
                                               instanceID: instanceID, setupHash: setupHash)
        }
    }

    @Test("duo export POST: the node's half refuses a share of another key or party, and garbage, typed",
          arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func exportNodeRefusals(algorithm: Keyshare.Algorithm) throws {
        let key = try Self.duoKey(algorithm)
        let other = try Self.duoKey(algorithm)
        var rng = SystemRandomNumberGenerator()
        func refusal(_ bytes: [UInt8], keyID: KeyID) -> DuoExportExchange.Refusal? {
            do {
                _ = try DuoExportExchange.exportMessage(algorithm: algorithm == .ecdsa ? .ecdsa : .eddsa, protocolBytes: bytes,
                                                        keyID: keyID, gen: key.gen, receiverKey: X25519.PrivateKey().publicKey,
                                                        instanceID: .random(), setupHash: .random(), using: &rng)
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(key.node, keyID: key.keyID) == nil)
        #expect(refusal(key.node, keyID: other.keyID) == .storedShareMismatch)
        #expect(refusal(Array(key.node.dropLast()), keyID: key.keyID) == .storedShareMismatch)
        #expect(refusal([], keyID: key.keyID) == .storedShareMismatch)
    }
}
