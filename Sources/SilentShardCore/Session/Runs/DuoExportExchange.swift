import Foundation
import MPCCrypto
import MPCProtocols

/// The math of the duo export POST (`docs/protocol/session.md` §2.2, §9.3): one exchange through the app's
/// backend instead of a step, with the export of `docs/protocol/dkls23.md` §16 (ECDSA) and its sealed FROST twin
/// (`docs/protocol/frost.md` §12.2), exporters E = {0, 1}, receiver 0. The node's half seals its share to the
/// SETUP's one-time `export_key` (the EXPORT_RESPONSE's export message, epk ‖ AEAD(s_1), 80 bytes); the app's half
/// opens it, checks s_1 against its public share, interpolates, checks the key and applies the soft path.
///
/// Both halves drive the export runs the WebSocket export uses (``DKLsExportRun``, ``FROSTExportRun``): one copy
/// of the math. Pure values: no I/O, no clock; randomness is the caller's. Bad input is a typed error, never a
/// trap.
package enum DuoExportExchange {
    /// The exporters; the receiver is party 0, the node party 1.
    package static let participants: [PartyIndex] = [0, 1]

    /// Why the node cannot answer an admitted export SETUP (each is one wire code at the node).
    package enum Refusal: Error, Sendable, Equatable {
        /// The node's stored share does not decode or is not the SETUP's key, generation or party 1 (INTERNAL).
        case storedShareMismatch
        /// The SETUP's `export_key` gives no usable shared secret (a small-order X25519 key; INVALID_PARAMETER).
        case unusableReceiverKey
    }

    /// The node's half: its export message for the EXPORT_RESPONSE, sealed to `receiverKey` and bound to the
    /// SETUP (`instanceID`, `setupHash`). `protocolBytes` is the node's stored protocol keyshare of `algorithm`.
    package static func exportMessage(algorithm: SessionAlgorithm, protocolBytes: [UInt8], keyID: KeyID, gen: Generation,
                                      receiverKey: X25519.PublicKey, instanceID: InstanceID, setupHash: SetupHash,
                                      using rng: inout some RandomNumberGenerator) throws(Refusal) -> [UInt8] {
        var sent: [ProtocolMessage]
        switch algorithm {
        case .ecdsa:
            guard let keyshare = try? DKLsKeyshare(serialized: protocolBytes), keyshare.partyIndex == 1,
                  keyshare.keyId == keyID.bytes, keyshare.generation == gen.bytes,
                  var run = try? DKLsExportRun.Sender(keyshare: keyshare, participants: participants, receiverKey: receiverKey,
                                                      instanceID: instanceID, setupHash: setupHash)
            else { throw .storedShareMismatch }
            do { sent = try run.start(using: &rng) } catch { throw .unusableReceiverKey }
        case .eddsa:
            guard let keyshare = try? FROST.Keyshare(encoded: protocolBytes), keyshare.party == 1,
                  keyshare.keyId == keyID.bytes, keyshare.generation == gen.bytes,
                  var run = try? FROSTExportRun.Sender(keyshare: keyshare, participants: participants, receiverKey: receiverKey,
                                                       instanceID: instanceID, setupHash: setupHash)
            else { throw .storedShareMismatch }
            do { sent = try run.start(using: &rng) } catch { throw .unusableReceiverKey }
        }
        guard sent.count == 1, let message = sent.popLast() else { throw .storedShareMismatch }
        return message.payload
    }

    /// The app's half: opens the node's export message with the request's one-time key and rebuilds the key at
    /// the request's soft path.
    package struct Receiver: Sendable, SecretReflecting {
        private enum Run: Sendable {
            case dkls(DKLsExportRun.Receiver)
            case frost(FROSTExportRun.Receiver)
        }

        private let run: Run

        /// The receiver of `keyshare` (the app's, party 0) for the request bound to `instanceID` and `setupHash`,
        /// whose `export_key` is `oneTimeKey`'s public key; the key is rebuilt at the soft `chainPath` ("m": the
        /// root). A keyshare that does not decode is `invalidInput(invalidKeyshare)`, a hardened or bad path
        /// `invalidInput(invalidDerivationPath)`.
        package init(keyshare: Keyshare, chainPath: String, oneTimeKey: X25519.PrivateKey, instanceID: InstanceID,
                     setupHash: SetupHash) throws(ProtocolError) {
            // The receiver draws nothing (the runs' signature asks for a generator); the system one, never a fixed one.
            var rng = SystemRandomNumberGenerator()
            switch keyshare.algorithm {
            case .ecdsa:
                guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                var receiver = try DKLsExportRun.Receiver(keyshare: share, participants: participants, oneTimeKey: oneTimeKey,
                                                          instanceID: instanceID, setupHash: setupHash, chainPath: chainPath)
                _ = try receiver.start(using: &rng)
                run = .dkls(receiver)
            case .eddsa:
                guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                var receiver = try FROSTExportRun.Receiver(keyshare: share, participants: participants, oneTimeKey: oneTimeKey,
                                                           instanceID: instanceID, setupHash: setupHash, chainPath: chainPath)
                _ = try receiver.start(using: &rng)
                run = .frost(receiver)
            }
        }

        /// The exported key from the node's export `message` (80 bytes). A message that does not open (wrong size,
        /// tampered, sealed to another key or request) or whose share does not match the node's public share is
        /// `abort(1, …)`; a result that is not the key `abort(nil, publicKeyMismatch)`.
        package func key(from message: [UInt8]) throws(ProtocolError) -> ExportedKey {
            var rng = SystemRandomNumberGenerator()
            switch run {
            case .dkls(var receiver):
                _ = try receiver.advance([ProtocolMessage(tag: DKLsTag.exportShare, from: 1, to: 0, payload: message)], using: &rng)
                guard let key = receiver.outcome else { throw .abort(party: nil, reason: .publicKeyMismatch) }
                return key
            case .frost(var receiver):
                _ = try receiver.advance([ProtocolMessage(tag: FROST.MessageTag.exportShare.rawValue, from: 1, to: 0,
                                                          payload: message)], using: &rng)
                guard let key = receiver.outcome else { throw .abort(party: nil, reason: .publicKeyMismatch) }
                return key
            }
        }
    }
}
