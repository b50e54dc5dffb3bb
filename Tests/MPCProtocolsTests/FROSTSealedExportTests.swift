import Foundation
import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

/// FROST export encrypted to the receiver's one-time X25519 key (the 80-byte shape of dkls23.md §16,
/// used by the duo export POST).
@Suite(.heavy) struct FROSTSealedExportTests {
    @Test func sealedExportReconstructsAndRejectsTampering() throws {
        var rng = DeterministicRandom(seed: 77)
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 3, using: &rng)
        let rsk = X25519.PrivateKey()
        let instanceId = FROST.randomBytes(32, using: &rng), setupHash = FROST.randomBytes(32, using: &rng)
        func parameters(_ k: PartyIndex, setupHash: [UInt8] = setupHash, exporters: [PartyIndex] = [0, 2])
            throws -> FROST.Export.Sealed.Parameters {
            try FROST.Export.Sealed.Parameters(keyshare: shares[Int(k)], exporters: exporters, receiver: 0,
                                               receiverKey: rsk.publicKey, instanceId: instanceId, setupHash: setupHash)
        }
        let message = try FROST.Export.Sealed.exportShare(parameters(2), using: &rng)
        #expect(message.count == FROST.Export.Sealed.messageSize)
        #expect(!Hex.encode(message).contains(Hex.encode(shares[2].secretShare.bytes)))
        let x = try FROST.Export.Sealed.receive(parameters(0), privateKey: rsk, messages: [2: message])
        #expect(Ed25519.Point(base: x) == shares[0].publicKey)

        // Any flipped bit (epk or ciphertext) → Abort(2).
        for index in [0, 31, 32, 63, 79] {
            var tampered = message
            tampered[index] ^= 0x01
            #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) {
                try FROST.Export.Sealed.receive(parameters(0), privateKey: rsk, messages: [2: tampered])
            }
        }
        // Bound to the session (setup hash), the sender and E.
        #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) {
            try FROST.Export.Sealed.receive(parameters(0, setupHash: FROST.randomBytes(32, using: &rng)), privateKey: rsk,
                                            messages: [2: message])
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try FROST.Export.Sealed.receive(parameters(0, exporters: [0, 1]), privateKey: rsk, messages: [1: message])
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .unexpectedSender)) {
            try FROST.Export.Sealed.receive(parameters(0), privateKey: rsk, messages: [2: message, 1: message])
        }
        #expect(throws: ProtocolError.abort(party: nil, reason: .missingMessages)) {
            try FROST.Export.Sealed.receive(parameters(0), privateKey: rsk, messages: [:])
        }
        // Another one-time key cannot open it; a private key not matching the parameters is refused.
        let other = X25519.PrivateKey()
        #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) {
            try FROST.Export.Sealed.receive(
                FROST.Export.Sealed.Parameters(keyshare: shares[0], exporters: [0, 2], receiver: 0, receiverKey: other.publicKey,
                                               instanceId: instanceId, setupHash: setupHash),
                privateKey: other, messages: [2: message])
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try FROST.Export.Sealed.receive(parameters(0), privateKey: other, messages: [2: message])
        }
        // A correctly encrypted but wrong share (s_1 sent as party 2's): Abort(2, invalidShare), checked
        // against Y_2; a non-canonical scalar (≥ ℓ) is refused too.
        for plaintext in [shares[1].secretShare.bytes, [UInt8](repeating: 0xff, count: 32)] {
            let esk = X25519.PrivateKey()
            let (key, aad) = DKLsExport.keyAndAAD(context: try parameters(0).context, exporter: 2, ephemeral: esk.publicKey.bytes,
                                                  receiverKey: rsk.publicKey.bytes,
                                                  sharedSecret: try esk.sharedSecret(with: rsk.publicKey))
            let forged = esk.publicKey.bytes + (try ChaCha20Poly1305.seal(plaintext, key: key, nonce: [UInt8](repeating: 0, count: 12),
                                                                          associatedData: aad))
            #expect(throws: ProtocolError.self) {
                try FROST.Export.Sealed.receive(parameters(0), privateKey: rsk, messages: [2: forged])
            }
        }
    }
}
