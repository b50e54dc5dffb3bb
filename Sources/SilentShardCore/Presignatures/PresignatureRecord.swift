import Foundation
import MPCCrypto

/// The app's durable record of one presignature (`docs/protocol/session.md` §8.2, §8.5), the `current`
/// share (kind `sdkRecord`) of the record `"~ss/presig/" + hex(presig_id)`:
///
/// ```
/// "SSPR" ‖ u8 version (1) ‖ header ‖ u8 state ‖ state fields ‖ u32 len ‖ sealed secrets
/// header = presig_id (32) ‖ u8 len ‖ key_id ‖ gen (32) ‖ u8 algorithm (1 ECDSA, 2 EdDSA) ‖ u8 signer
///          ‖ u16 len ‖ path (UTF-8) ‖ u8 len ‖ P′ ‖ u64 expires_at (ms)
/// state  = 1 ready | 2 finishing: u32 len ‖ m ‖ u32 len ‖ FINAL_REQUEST | 3 finished: u32 len ‖ m ‖ u32 len ‖ signature
/// ```
///
/// The secrets are `nonce (24) ‖ XChaCha20-Poly1305(secrets)` under `sealingKey(material:header:)`, with
/// associated data `"SilentShard/presignature/v1" ‖ 0x00 ‖ header`: a record moved to another id, key,
/// generation, signer, path or expiry does not open. A finished record keeps no secrets (empty).
/// Decoding is strict (no trailing bytes, bounded lengths); anything else is `corruptRecord`.
package struct PresignatureRecord: Sendable, Equatable, SecretReflecting {
    /// What is public about a presignature; authenticated together with its secrets.
    package struct Header: Sendable, Equatable {
        package var id: [UInt8]
        package var keyId: [UInt8]
        package var generation: [UInt8]
        package var algorithm: Keyshare.Algorithm
        package var signer: UInt8
        package var chainPath: String
        package var derivedPublicKey: [UInt8]
        package var expiresAtMilliseconds: UInt64

        package init(id: [UInt8], keyId: [UInt8], generation: [UInt8], algorithm: Keyshare.Algorithm, signer: UInt8,
                     chainPath: String, derivedPublicKey: [UInt8], expiresAtMilliseconds: UInt64) {
            self.id = id
            self.keyId = keyId
            self.generation = generation
            self.algorithm = algorithm
            self.signer = signer
            self.chainPath = chainPath
            self.derivedPublicKey = derivedPublicKey
            self.expiresAtMilliseconds = expiresAtMilliseconds
        }

        /// The key id as the API spells it (lowercase hex).
        package var keyIdHex: String { Hex.encode(keyId) }
    }

    /// Where the presignature is in its single use (session.md §8.5).
    package enum State: Sendable, Equatable {
        /// Unused: it may be finished once, on any message.
        case ready
        /// The tombstone: the app computed its finish on `message` and may have sent `request`; it is
        /// finished on this message only, by resending these exact bytes.
        case finishing(message: [UInt8], request: [UInt8])
        /// Finished: the verified signature on `message` (public); the secrets are gone.
        case finished(message: [UInt8], signature: [UInt8])
    }

    package var header: Header
    package var state: State
    /// `nonce ‖ ciphertext` of the secrets; empty once finished.
    package var sealedSecrets: [UInt8]

    package var description: String {
        "PresignatureRecord(\(Hex.encode(header.id.prefix(4)))…, key \(header.keyIdHex), state \(stateName))"
    }

    private var stateName: String {
        switch state {
        case .ready: return "ready"
        case .finishing: return "finishing"
        case .finished: return "finished"
        }
    }

    static let magic = Array("SSPR".utf8)
    static let version: UInt8 = 1
    static let associatedDataLabel = Array("SilentShard/presignature/v1".utf8) + [0]
    static let sealingSalt = Array("SilentShard/presignature-seal/v1".utf8)
    /// Longest message, request or signature a record holds (a FINAL_REQUEST is at most 40 KiB).
    static let maximumFieldByteCount = 64 * 1024
    /// Longest sealed secrets (a DKLs presignature with its keys is well under 1 KiB; an EdDSA one a few hundred bytes).
    static let maximumSealedByteCount = 64 * 1024
}

extension PresignatureRecord {
    /// The record's bytes.
    package func encoded() -> [UInt8] {
        var writer = WireWriter()
        writer.append(Self.magic)
        writer.append(uint8: Self.version)
        writer.append(Self.encode(header))
        switch state {
        case .ready:
            writer.append(uint8: 1)
        case .finishing(let message, let request):
            writer.append(uint8: 2)
            writer.append(uint32: UInt32(message.count))
            writer.append(message)
            writer.append(uint32: UInt32(request.count))
            writer.append(request)
        case .finished(let message, let signature):
            writer.append(uint8: 3)
            writer.append(uint32: UInt32(message.count))
            writer.append(message)
            writer.append(uint32: UInt32(signature.count))
            writer.append(signature)
        }
        writer.append(uint32: UInt32(sealedSecrets.count))
        writer.append(sealedSecrets)
        return writer.bytes
    }

    /// Strictly decodes a record stored under `storageKeyId` (named in errors; it must hold this record's id).
    package init(bytes: [UInt8], storageKeyId: String) throws(StorageError) {
        func corrupt(_ reason: String) -> StorageError { .corruptRecord(keyId: storageKeyId, reason: reason) }
        var reader = WireReader(bytes)
        do {
            guard try reader.read(4) == Self.magic else { throw corrupt("not a presignature record") }
            guard try reader.readUInt8() == Self.version else { throw corrupt("unsupported presignature record version") }
            let id = try reader.read(32)
            let keyId = try reader.read(Int(try reader.readUInt8()))
            let generation = try reader.read(32)
            let algorithm: Keyshare.Algorithm
            switch try reader.readUInt8() {
            case 1: algorithm = .ecdsa
            case 2: algorithm = .eddsa
            default: throw corrupt("algorithm")
            }
            let signer = try reader.readUInt8()
            guard let chainPath = String(validating: try reader.read(Int(try reader.readUInt16())), as: UTF8.self) else {
                throw corrupt("path")
            }
            let derivedPublicKey = try reader.read(Int(try reader.readUInt8()))
            let expires = try reader.readUInt64()
            header = Header(id: id, keyId: keyId, generation: generation, algorithm: algorithm, signer: signer,
                            chainPath: chainPath, derivedPublicKey: derivedPublicKey, expiresAtMilliseconds: expires)
            func field() throws -> [UInt8] {
                let count = Int(try reader.readUInt32())
                guard count <= Self.maximumFieldByteCount else { throw corrupt("field length") }
                return try reader.read(count)
            }
            switch try reader.readUInt8() {
            case 1: state = .ready
            case 2: state = .finishing(message: try field(), request: try field())
            case 3: state = .finished(message: try field(), signature: try field())
            default: throw corrupt("state")
            }
            let sealedCount = Int(try reader.readUInt32())
            guard sealedCount <= Self.maximumSealedByteCount else { throw corrupt("sealed length") }
            sealedSecrets = try reader.read(sealedCount)
            try reader.finish()
        } catch let error as StorageError {
            throw error
        } catch {
            throw corrupt("truncated or trailing bytes")
        }
        guard header.keyId.count == 32, header.signer == 1 || header.signer == 2 else { throw corrupt("key id or signer") }
        if case .finished = state {
            guard sealedSecrets.isEmpty else { throw corrupt("finished record with secrets") }
        } else {
            guard sealedSecrets.count > XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount else {
                throw corrupt("sealed secrets")
            }
        }
        guard storageKeyId == (try? KeyId.canonical(KeyId.presignaturePrefix + Hex.encode(header.id))) else {
            throw .keyIdMismatch(keyId: storageKeyId)
        }
    }

    static func encode(_ header: Header) -> [UInt8] {
        var writer = WireWriter()
        writer.append(header.id)
        writer.append(uint8: UInt8(header.keyId.count))
        writer.append(header.keyId)
        writer.append(header.generation)
        writer.append(uint8: header.algorithm == .ecdsa ? 1 : 2)
        writer.append(uint8: header.signer)
        let path = Array(header.chainPath.utf8)
        writer.append(uint16: UInt16(path.count))
        writer.append(path)
        writer.append(uint8: UInt8(header.derivedPublicKey.count))
        writer.append(header.derivedPublicKey)
        writer.append(uint64: header.expiresAtMilliseconds)
        return writer.bytes
    }
}

extension PresignatureRecord {
    /// The record's sealing key: HKDF-SHA256 (RFC 5869, one block) of `material` — the app's keyshare bytes of
    /// the presignature's generation, or the app's own key — with the key id and generation as info. A
    /// refresh (a new generation) makes the old generation's records unopenable as well as useless.
    package static func sealingKey(material: [UInt8], header: Header) -> [UInt8] {
        let prk = SHA256.hmac(key: sealingSalt, data: material)
        return SHA256.hmac(key: prk, data: header.keyId + header.generation + [1])
    }

    /// A ready record of `header` with `secrets` sealed under `key`.
    package static func sealing(_ secrets: [UInt8], header: Header, key: [UInt8]) throws(StorageError) -> PresignatureRecord {
        let nonce = SecureRandom.bytes(count: XChaCha20Poly1305.nonceByteCount)
        guard header.keyId.count == 32, header.id.count == 32, header.generation.count == 32,
              header.chainPath.utf8.count <= Int(UInt16.max), header.derivedPublicKey.count <= Int(UInt8.max),
              let sealed = try? XChaCha20Poly1305.seal(secrets, key: key, nonce: nonce,
                                                       associatedData: associatedDataLabel + encode(header))
        else { throw .corruptRecord(keyId: KeyId.presignaturePrefix + Hex.encode(header.id), reason: "cannot seal") }
        return PresignatureRecord(header: header, state: .ready, sealedSecrets: nonce + sealed)
    }

    /// The secrets, or `corruptRecord` when they do not open under `key` with this header (altered,
    /// moved, or sealed for another generation).
    package func openSecrets(key: [UInt8]) throws(StorageError) -> [UInt8] {
        let nonceCount = XChaCha20Poly1305.nonceByteCount
        guard sealedSecrets.count > nonceCount,
              let secrets = try? XChaCha20Poly1305.open(Array(sealedSecrets[nonceCount...]), key: key,
                                                        nonce: Array(sealedSecrets[..<nonceCount]),
                                                        associatedData: Self.associatedDataLabel + Self.encode(header))
        else {
            throw .corruptRecord(keyId: KeyId.presignaturePrefix + Hex.encode(header.id), reason: "secrets do not authenticate")
        }
        return secrets
    }
}
