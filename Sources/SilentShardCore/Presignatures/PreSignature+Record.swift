import Foundation
import MPCCrypto
import MPCProtocols

/// A `PreSignature` and its durable record (`PresignatureRecord`, `docs/presignature-lifecycle.md`): the
/// secrets are sealed under a key derived from the app's keyshare of the presignature's generation.
extension PreSignature {
    /// The record's public header.
    package var recordHeader: PresignatureRecord.Header {
        PresignatureRecord.Header(id: [UInt8](id), keyId: (try? Hex.decode(keyId)) ?? [], generation: [UInt8](generation),
                                  algorithm: algorithm, signer: signerIndex, chainPath: chainPath,
                                  derivedPublicKey: [UInt8](derivedPublicKey),
                                  expiresAtMilliseconds: UInt64(max(0, expiresAt.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// A ready record of this (fresh) presignature, sealed for `keyshare`.
    package func readyRecord(keyshare: Keyshare) throws(SilentShardError) -> PresignatureRecord {
        guard let secrets else { throw .presignatureConsumed }
        let header = recordHeader
        let plain = PresignatureSecrets(presignature: secrets.presignature, finalKeys: secrets.finalKeys,
                                        peerRound1: secrets.peerRound1)
        do {
            return try PresignatureRecord.sealing(plain.encoded(), header: header,
                                                  key: PresignatureRecord.sealingKey(material: keyshare.protocolKeyshareBytes,
                                                                                     header: header))
        } catch {
            throw SilentShardError(storage: error)
        }
    }

    /// The presignature of a record that is ready or finishing, opened with `keyshare` (the app's share of
    /// the record's key and generation). Nil for a finished record; `storage` when it does not open.
    package static func restored(from record: PresignatureRecord, keyshare: Keyshare) throws(SilentShardError) -> PreSignature? {
        let header = record.header
        let pendingMessage: [UInt8]?
        switch record.state {
        case .finished: return nil
        case .ready: pendingMessage = nil
        case .finishing(let message, _): pendingMessage = message
        }
        guard header.keyId == keyshare.keyIdBytes, header.generation == [UInt8](keyshare.generation),
              header.algorithm == keyshare.algorithm
        else { throw .staleKeyshare }
        guard keyshare.mode == .trio || header.signer == 1 else { throw .invalidInput(reason: "presignature signer") }
        let secrets: PresignatureSecrets
        do {
            let key = PresignatureRecord.sealingKey(material: keyshare.protocolKeyshareBytes, header: header)
            secrets = try PresignatureSecrets(bytes: try record.openSecrets(key: key), signer: header.signer)
        } catch {
            throw SilentShardError(storage: error)
        }
        var restored = Secrets(presignature: secrets.presignature, finalKeys: secrets.finalKeys)
        if header.algorithm == .eddsa {
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidKeyshare(reason: "not an EdDSA keyshare") }
            restored.frostKeyshare = share
            restored.peerRound1 = secrets.peerRound1
        }
        return PreSignature(id: header.id, keyId: header.keyIdHex, generation: header.generation,
                            mode: keyshare.mode == .duo ? .duo : .trio, signerIndex: header.signer,
                            chainPath: header.chainPath, derivedPublicKey: header.derivedPublicKey,
                            expiresAt: Date(timeIntervalSince1970: TimeInterval(header.expiresAtMilliseconds) / 1000),
                            algorithm: header.algorithm, secrets: restored, pendingMessage: pendingMessage)
    }
}

extension Signature {
    /// How a finished presignature record keeps its signature: ECDSA r ‖ s ‖ recovery id, EdDSA R ‖ S.
    package var recordBytes: [UInt8] {
        [UInt8](rawRepresentation) + (recoveryId.map { [$0] } ?? [])
    }

    /// A signature a finished record kept, verified again under `key` on `message` (storage is not trusted
    /// to return what was written); nil when it does not verify.
    package static func fromRecord(_ bytes: [UInt8], algorithm: Keyshare.Algorithm, key: [UInt8], message: [UInt8]) -> Signature? {
        switch algorithm {
        case .ecdsa:
            guard bytes.count == 65, let raw = try? Secp256k1.ECDSASignature(r: Array(bytes[0..<32]), s: Array(bytes[32..<64]),
                                                                             recoveryId: bytes[64]),
                  let point = try? Secp256k1.Point(compressed: key), message.count == 32,
                  Secp256k1.ECDSA.verify(raw, hash: message, publicKey: point)
            else { return nil }
            return Signature(ecdsa: raw)
        case .eddsa:
            guard bytes.count == 64, let verifying = try? Ed25519.VerifyingKey(bytes: key),
                  verifying.isValidSignature(bytes, for: message)
            else { return nil }
            return try? Signature(eddsa: Data(bytes))
        }
    }
}
