import Foundation
import MPCCrypto
import MPCProtocols
import Testing
@testable import SilentShardCore

@Suite("Session identities: device keys, certificates, session keys, hashes")
struct SignatureTests {
    @Test(arguments: [MessageSignerKeyType.ed25519, .p256])
    func deviceKeySignsAndVerifies(type: MessageSignerKeyType) async throws {
        let signer: any MessageSigner = type == .ed25519 ? SoftwareEd25519MessageSigner() : SoftwareP256MessageSigner()
        #expect(signer.keyType == type)
        #expect(signer.verifyingKey.count == type.publicKeyByteCount)
        let key = try DeviceKey(signer: signer)
        #expect(key.identity.count == (type == .ed25519 ? 33 : 66))
        #expect(try DeviceKey(identity: key.identity) == key)
        let message: [UInt8] = Array("SilentShard/v3/setup".utf8) + [0, 1, 2, 3]
        let signature = Array(try await signer.sign(Data(message)))
        #expect(signature.count == 64)
        #expect(key.isValidSignature(signature, for: message))
        #expect(!key.isValidSignature(signature, for: message + [0]))
        var flipped = signature; flipped[10] ^= 1
        #expect(!key.isValidSignature(flipped, for: message))
        #expect(!key.isValidSignature(Array(signature.prefix(63)), for: message))
        let other = try DeviceKey(signer: type == .ed25519 ? SoftwareEd25519MessageSigner() as any MessageSigner
                                                            : SoftwareP256MessageSigner())
        #expect(!other.isValidSignature(signature, for: message))
    }

    @Test func deviceKeyDecodingIsStrict() throws {
        let ed = SoftwareEd25519MessageSigner()
        let p = SoftwareP256MessageSigner()
        #expect(throws: CryptoError.self) { try DeviceKey(identity: [0x03] + Array(ed.verifyingKey)) }
        #expect(throws: CryptoError.self) { try DeviceKey(identity: [0x02] + Array(ed.verifyingKey)) }
        #expect(throws: CryptoError.self) { try DeviceKey(identity: [0x01] + Array(p.verifyingKey)) }
        // P-256 must be uncompressed.
        let compressed = try P256.VerifyingKey(x963Representation: Array(p.verifyingKey)).compressedRepresentation
        #expect(throws: CryptoError.self) { try DeviceKey(type: .p256, publicKey: compressed + [0] + Array(repeating: 0, count: 31)) }
        // Small-order Ed25519 key (identity point encoding).
        #expect(throws: CryptoError.self) { try DeviceKey(type: .ed25519, publicKey: [1] + [UInt8](repeating: 0, count: 31)) }
        #expect(throws: CryptoError.self) { try DeviceKey(identity: []) }
    }

    @Test func signingInputAndSessionHash() {
        #expect(SessionHash.signingInput(.setup, [9]) == Array("SilentShard/v3/setup".utf8) + [0, 9])
        // Hs framing: lp(domain) ‖ lp(tag) ‖ u32(k) ‖ lp(f)…
        var framed: [UInt8] = [0, 0, 0, 22] + Array("SilentShard-Session-v1".utf8)
        framed += [0, 0, 0, 5] + Array("setup".utf8) + [0, 0, 0, 1] + [0, 0, 0, 2, 0xAB, 0xCD]
        #expect(SessionHash.setupHash(headerAndPayload: [0xAB, 0xCD]).bytes == SHA256.hash(framed))
        #expect(SessionHash.hash("p2p", [1]) != SessionHash.hash("final", [1]))
    }

    @Test func cloudVerifyingKeyParsing() throws {
        let key = Ed25519.SigningKey().verifyingKey
        #expect(try CloudVerifyingKey.parse(Hex.encode(key.bytes)) == key)
        #expect(try CloudVerifyingKey.parse(Hex.encode(key.bytes).uppercased()) == key)
        for bad in ["", String(Hex.encode(key.bytes).dropLast()), "0x" + Hex.encode(key.bytes), Hex.encode(key.bytes) + "00",
                    String(repeating: "g", count: 64), "01" + String(repeating: "0", count: 62)] {
            #expect(throws: SessionError.invalidConfiguration(.cloudVerifyingKey)) { try CloudVerifyingKey.parse(bad) }
        }
    }

    @Test func nodeCertificate() throws {
        let cluster = Ed25519.SigningKey()
        let node = Ed25519.SigningKey()
        let now: UInt64 = 1_800_000_000
        let group = SecureRandom.bytes(count: 16)
        let cert = NodeCertificate(role: .trioB, groupID: group, nodeKey: node.verifyingKey, notBefore: now - 10,
                                   notAfter: now + 86_400, serial: 42, issuer: cluster)
        #expect(cert.encoded.count == 142)
        #expect(Array(cert.encoded.prefix(6)) == Array("SSNC".utf8) + [1, 2])
        let decoded = try NodeCertificate(bytes: cert.encoded)
        #expect(decoded == cert)
        try decoded.verify(issuer: cluster.verifyingKey, senderIndex: 2, mode: .trio, nowSeconds: now)

        func failure(_ body: () throws -> Void) -> SessionError.CloudVerificationFailure? {
            do { try body(); return nil } catch {
                if case .cloudVerificationFailed(let reason)? = error as? SessionError { return reason }
                return nil
            }
        }
        #expect(failure { try cert.verify(issuer: node.verifyingKey, senderIndex: 2, mode: .trio, nowSeconds: now) } == .certificateSignature)
        #expect(failure { try cert.verify(issuer: cluster.verifyingKey, senderIndex: 1, mode: .trio, nowSeconds: now) } == .certificateRole)
        #expect(failure { try cert.verify(issuer: cluster.verifyingKey, senderIndex: 2, mode: .duo, nowSeconds: now) } == .certificateRole)
        #expect(failure { try cert.verify(issuer: cluster.verifyingKey, senderIndex: 2, mode: .trio, nowSeconds: now - 611) } == .certificateNotYetValid)
        #expect(failure { try cert.verify(issuer: cluster.verifyingKey, senderIndex: 2, mode: .trio, nowSeconds: now - 600) } == nil)
        #expect(failure { try cert.verify(issuer: cluster.verifyingKey, senderIndex: 2, mode: .trio, nowSeconds: now + 86_400 + 601) } == .certificateExpired)
        let long = NodeCertificate(role: .trioA, groupID: group, nodeKey: node.verifyingKey, notBefore: now,
                                   notAfter: now + 401 * 86_400, serial: 1, issuer: cluster)
        #expect(failure { try long.verify(issuer: cluster.verifyingKey, senderIndex: 1, mode: .trio, nowSeconds: now) } == .certificateValidityTooLong)
        let selfSigned = NodeCertificate(role: .duo, groupID: group, nodeKey: cluster.verifyingKey, notBefore: now,
                                         notAfter: now + 86_400, serial: 1, issuer: cluster)
        #expect(failure { try selfSigned.verify(issuer: cluster.verifyingKey, senderIndex: 1, mode: .duo, nowSeconds: now) } == .certificateKeyIsClusterKey)

        var bytes = cert.encoded; bytes[0] = 0x58
        #expect(failure { _ = try NodeCertificate(bytes: bytes) } == .malformedCertificate)
        bytes = cert.encoded; bytes[4] = 2
        #expect(failure { _ = try NodeCertificate(bytes: bytes) } == .certificateVersion)
        bytes = cert.encoded; bytes[5] = 4
        #expect(failure { _ = try NodeCertificate(bytes: bytes) } == .certificateRole)
        bytes = cert.encoded; bytes[100] ^= 1
        #expect(failure { try NodeCertificate(bytes: bytes).verify(issuer: cluster.verifyingKey, senderIndex: 2, mode: .trio, nowSeconds: now) } == .certificateSignature)
        #expect(failure { _ = try NodeCertificate(bytes: cert.encoded + [0]) } == .malformedCertificate)
    }

    @Test func sessionKeysAndSecretsDoNotLeak() throws {
        let keys = SessionKeyPair()
        let pub = keys.publicKeys
        #expect(pub.bytes.count == 64)
        #expect(try SessionPublicKeys(bytes: pub.bytes) == pub)
        #expect(throws: SessionError.self) { try SessionPublicKeys(bytes: Array(pub.bytes.prefix(63))) }
        #expect(throws: SessionError.self) { try SessionPublicKeys(bytes: [1] + [UInt8](repeating: 0, count: 63)) }
        let secretHex = Hex.encode(keys.agreementKey.rawRepresentation)
        let seedHex = Hex.encode(keys.signingKey.seed)
        var dumped = ""
        dump(keys, to: &dumped)
        for text in [dumped, String(describing: keys), "\(keys)"] {
            #expect(!text.contains(secretHex) && !text.contains(seedHex))
        }
        let signer = SoftwareEd25519MessageSigner()
        var dumpedSigner = ""
        dump(signer, to: &dumpedSigner)
        #expect(!dumpedSigner.contains("seed"))
    }

    @Test func transcriptOrderIsCanonical() {
        let id = InstanceID.random()
        let a = FrameHeader(kind: .broadcast, sender: 1, receiver: 0xFF, tag: 0x0101, seq: 1, length: 1, instanceID: id)
        let b = FrameHeader(kind: .broadcast, sender: 0, receiver: 0xFF, tag: 0x0201, seq: 2, length: 1, instanceID: id)
        let c = FrameHeader(kind: .accept, sender: 2, receiver: 0xFF, seq: 0, length: 1, instanceID: id)
        let commit = FrameHeader(kind: .commit, sender: 0, receiver: 0xFF, seq: 3, length: 1, instanceID: id)
        var t1 = TranscriptDigest(), t2 = TranscriptDigest()
        t1.add(header: a, payload: [1]); t1.add(header: b, payload: [2]); t1.add(header: c, payload: [3])
        t2.add(header: c, payload: [3]); t2.add(header: b, payload: [2]); t2.add(header: a, payload: [1])
        let addedCommit = t2.add(header: commit, payload: [4])
        #expect(!addedCommit)
        #expect(t1.digest == t2.digest && t1.count == 3)
        var t3 = TranscriptDigest()
        t3.add(header: a, payload: [9]); t3.add(header: b, payload: [2]); t3.add(header: c, payload: [3])
        #expect(t3.digest != t1.digest)
    }
}
