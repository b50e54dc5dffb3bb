import MPCCrypto
import MPCProtocols

/// The secret part of the app's half of a presignature, as sealed in its `PresignatureRecord`:
///
/// ```
/// u8 version (1) ‖ u32 len ‖ presignature ‖ kf_{0→X} (32) ‖ kf_{X→0} (32) ‖ u32 len ‖ X's round-1 commitments
/// ```
///
/// ECDSA: `presignature` = `DKLsPresignature.serialized()`, no commitments; EdDSA:
/// `FROST.Presignature.serialized()` and X's round-1 commitments. (The EdDSA finish also needs the app's
/// keyshare, which the caller loads from storage and checks against the record's key id and generation.)
package struct PresignatureSecrets: Sendable, SecretReflecting {
    package var presignature: [UInt8]
    package var finalKeys: PreSignFinalKeys
    package var peerRound1: [UInt8]

    package init(presignature: [UInt8], finalKeys: PreSignFinalKeys, peerRound1: [UInt8]) {
        self.presignature = presignature
        self.finalKeys = finalKeys
        self.peerRound1 = peerRound1
    }

    static let version: UInt8 = 1

    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.append(uint8: Self.version)
        writer.append(uint32: UInt32(presignature.count))
        writer.append(presignature)
        let keys = finalKeys.storedKeys
        writer.append(keys.request)
        writer.append(keys.response)
        writer.append(uint32: UInt32(peerRound1.count))
        writer.append(peerRound1)
        return writer.bytes
    }

    /// Strict decoding of secrets that authenticated; `signer` is the record's node X.
    package init(bytes: [UInt8], signer: PartyIndex) throws(StorageError) {
        var reader = WireReader(bytes)
        let failure = StorageError.corruptRecord(keyId: KeyId.presignaturePrefix, reason: "presignature secrets")
        do {
            guard try reader.readUInt8() == Self.version else { throw failure }
            let count = Int(try reader.readUInt32())
            guard count <= PresignatureRecord.maximumSealedByteCount else { throw failure }
            presignature = try reader.read(count)
            let request = try reader.read(32), response = try reader.read(32)
            finalKeys = try PreSignFinalKeys(signer: signer, requestKey: request, responseKey: response)
            let commitments = Int(try reader.readUInt32())
            guard commitments <= PresignatureRecord.maximumSealedByteCount else { throw failure }
            peerRound1 = try reader.read(commitments)
            try reader.finish()
        } catch {
            throw failure
        }
    }
}
