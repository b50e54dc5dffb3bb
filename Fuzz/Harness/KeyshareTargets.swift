import CloudNode
import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardCore

/// Keyshare and presignature decoders (stored bytes, backups, node share blobs). Selector % 8:
/// 0 `DKLsKeyshare(serialized:)`, 1 `FROST.Keyshare(encoded:)`, 2 `Keyshare(serialized:)`,
/// 3 `Keyshare(algorithm:mode:protocolBytes:)` (selector bits 3–4 pick algorithm and mode),
/// 4 `KeyshareRecordCodec.decode` (selector bit 3: the SHA-256 trailer is recomputed first, so
/// mutations reach the record parser), 5 `NodeShareBlob(bytes:)`, 6 `DKLsPresignature.deserialize`,
/// 7 `KeyshareBackup.open`, `info` and `openKeyshare` (versions 1 and 2; Argon2id costs within the accepted bounds are lowered to the minimum
/// first, so each input stays fast; out-of-bounds costs are left for the decoder to refuse).
enum KeyshareTargets {
    static let keyID = "fuzz-key"
    static let password = "fuzz password"

    struct Material: Sendable {
        var dkls: [UInt8]
        var frost: [UInt8]
        var presignature: [UInt8]
    }

    static let material: Material = fixture("keyshares") {
        var random = DeterministicRandom(seed: 0x5EED)
        let dkls = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &random)
        let presignatures = try DKLsInProcess.presign(dkls, using: &random)
        let frost = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &random)
        return Material(dkls: dkls[0].serialized(), frost: frost[0].encoded, presignature: try presignatures[0].serialized())
    }

    static let minimumLimits = Argon2id.Limits(opsLimit: 1, memLimit: 8192)

    static let keyshares = FuzzTarget(
        name: "keyshare",
        summary: "DKLs23/FROST keyshare codecs, Keyshare, KeyshareRecord, NodeShareBlob, DKLsPresignature, KeyshareBackup.open",
        seeds: {
            let material = Self.material
            let sdkKeyshare = fixture("Keyshare") { try Keyshare(algorithm: .ecdsa, mode: .duo, protocolBytes: material.dkls) }
            let frostKeyshare = fixture("Keyshare") { try Keyshare(algorithm: .eddsa, mode: .trio, protocolBytes: material.frost) }
            let record = fixture("record") {
                try KeyshareRecordCodec.encode(KeyshareRecord(keyId: keyID, staged: StoredShare(kind: .eddsa, bytes: material.frost),
                                                              current: StoredShare(kind: .ecdsa, bytes: material.dkls)))
            }
            let blob = NodeShareBlob(deviceIdentity: [1] + FixedKeys.bytes(0x42), protocolBytes: material.dkls)
            let backup = fixture("backup") {
                try KeyshareBackup.seal(frostKeyshare.serialized(), password: password, limits: minimumLimits)
            }
            let backupVersion2 = fixture("backup v2") { try KeyshareBackup.seal(frostKeyshare, password: password, limits: minimumLimits) }
            return [
                [0] + material.dkls, [1] + material.frost, [2] + [UInt8](sdkKeyshare.serialized()),
                [2] + [UInt8](frostKeyshare.serialized()), [3] + material.dkls, [3 | 1 << 3 | 1 << 4] + material.frost,
                [4] + record, [4 | 1 << 3] + record, [5] + blob.encoded, [6] + material.presignature, [7] + [UInt8](backup),
                [7] + [UInt8](backupVersion2),
            ]
        },
        prepare: { _ = material },
        run: { input in
            guard let (selector, bytes) = split(input) else { return }
            switch selector % 8 {
            case 0:
                guard let share = try? DKLsKeyshare(serialized: bytes) else { return }
                accepted()
                let encoded = share.serialized()
                expect((try? DKLsKeyshare(serialized: encoded))?.serialized() == encoded, "DKLs23 keyshare round trip")
            case 1:
                guard let share = try? FROST.Keyshare(encoded: bytes) else { return }
                accepted()
                expect(share.encoded == bytes, "FROST keyshare re-encoding differs from its bytes")
                expect((try? FROST.Keyshare(encoded: share.encoded)) == share, "FROST keyshare round trip")
            case 2:
                guard let share = try? Keyshare(serialized: Data(bytes)) else { return }
                accepted()
                expect([UInt8](share.serialized()) == bytes, "Keyshare re-serialization differs from its bytes")
                expect((try? Keyshare(serialized: share.serialized())) == share, "Keyshare round trip")
            case 3:
                let algorithm: Keyshare.Algorithm = selector & 1 << 3 == 0 ? .ecdsa : .eddsa
                let mode: Keyshare.Mode = selector & 1 << 4 == 0 ? .duo : .trio
                guard let share = try? Keyshare(algorithm: algorithm, mode: mode, protocolBytes: bytes) else { return }
                accepted()
                expect((try? Keyshare(serialized: share.serialized())) == share, "Keyshare round trip")
            case 4:
                var record = bytes
                if selector & 1 << 3 != 0, record.count >= SHA256.byteCount {
                    let body = Array(record.dropLast(SHA256.byteCount))
                    record = body + SHA256.hash(body)
                }
                guard let decoded = try? KeyshareRecordCodec.decode(record, expectedKeyId: keyID) else { return }
                accepted()
                guard let encoded = try? KeyshareRecordCodec.encode(decoded) else {
                    return expect(false, "a decoded record does not encode")
                }
                expect(encoded == record, "record re-encoding differs from its bytes")
                expect((try? KeyshareRecordCodec.decode(encoded, expectedKeyId: keyID)) == decoded, "record round trip")
            case 5:
                guard let blob = try? NodeShareBlob(bytes: bytes) else { return }
                accepted()
                expect(blob.encoded == bytes, "node share blob re-encoding differs from its bytes")
            case 6:
                guard let presignature = try? DKLsPresignature.deserialize(bytes) else { return }
                accepted()
                let encoded = try? presignature.serialized()
                expect(encoded == bytes, "presignature re-encoding differs from its bytes")
            default:
                var blob = bytes
                if blob.count >= 15 {
                    let ops = blob[7..<11].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    let memKiB = blob[11..<15].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    if (1...16).contains(ops) { blob.replaceSubrange(7..<11, with: [0, 0, 0, 1]) }
                    if (8...(1 << 20)).contains(memKiB) { blob.replaceSubrange(11..<15, with: [0, 0, 0, 8]) }
                }
                if (try? KeyshareBackup.open(Data(blob), password: password)) != nil { accepted() }
                _ = try? KeyshareBackup.info(Data(blob))
                if let keyshare = try? KeyshareBackup.openKeyshare(Data(blob), password: password) {
                    expect((try? KeyshareBackup.info(Data(blob)))?.generation == keyshare.generation, "backup header and keyshare disagree")
                }
            }
        })
}
