import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import Testing
@testable import SilentShardCore

/// Backups written by this SDK must open in every later version: fixed blobs of format version 1 (bytes)
/// and version 2 (a FROST keyshare, regenerated here from the same seed), made once with the password
/// "correct horse" and Argon2id at 1 pass / 8 MiB. A change to the format or the KDF breaks this test.
@Suite("KeyshareBackup: fixed blobs of every version still open")
struct KeyshareBackupVectorTests {
    static let version1 =
        "5353424b0101010000000100002000d63a7068f9fc2795377feb8ef31b702aed2aacf8a0baddaae25f42d023fa811c9cdbef" +
        "5f47fc78ad8890429212025923b416231f1870ba5a027c5870088d2d55afc569fc903c0bbffa98ffdff42753f3593e2a0969" +
        "3df578a4dc3ce28ce7ae8b7b755d2a85dc24934a1dcd2f98b087c51f5cdb4329fb2ffa"

    static let version2 =
        "5353424b02010100000001000020007f16c6aa94ccdaf26f5c4b4a9e7163e5c1050b89a13276e9eeadb258f77c0e216a90e7" +
        "61232ffdd0aac882341b8bb8c82c51cab80ffd378785c6cc1f20e9a844d772c5dd07a9b28bb06f5f0a7d185dbb75053760a1" +
        "a75af99159c8a3d19400d42922a272c4ddbcb66704797c538e1a60cfff08a3474ded4a05e0dcff7a2f913c604dceb46c5d56" +
        "ae2c22d6c1ed0ddb5f0eab1e740496117ef5a9ee597fcd8f0a046c91ac16dfea7fe467854552e7ac56c2561de5a1f3007529" +
        "f7b489746e3d9e9bb7824b7e1a207348e1f32eafdd636bb1f17dde49ead1c9384825e130da66fb3c4389285ba4f1e8143b8b" +
        "cb480c4276d9364bb2390f9845fc7749dfbf928019794c80f54d4f9ad154f048041b07dd15119aaea985bdf3b802bd97f4d4" +
        "5dd776e4950e34ebce6bdce8ba75adcbbb435ca39de6aaf151217fae156792c6b5af8e97ab5ce1aeeb66abd5bb8e9e55cdea" +
        "53d9b623be609e7f18297ea8b9e27345a114fefc5868e2adc73bed1bf62b47603d48006147acd4e6705fff420cb6bcc0059c" +
        "26d4a72cdf3ef9aea6b472fb776a934603d460a35ee80cbebda14e7cfa394f659331ea887bb9cff808bb85d9df1a1e37ef2d" +
        "b1fb8b9e"

    @Test func versionOneStillOpens() throws {
        let blob = Data(try Hex.decode(Self.version1))
        #expect(try KeyshareBackup.info(blob) == KeyshareBackup.Info(version: 1, keyId: nil, generation: nil))
        #expect(try KeyshareBackup.open(blob, password: "correct horse") == Data((0..<48).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        #expect(throws: StorageError.incorrectPassword) { try KeyshareBackup.open(blob, password: "correct horse!") }
    }

    @Test func versionTwoStillOpens() throws {
        var rng = DeterministicRandom(seed: 4242)
        let keyshare = Keyshare(frost: try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)[0], mode: .duo)
        let blob = Data(try Hex.decode(Self.version2))
        #expect(try KeyshareBackup.info(blob) == KeyshareBackup.Info(version: 2, keyId: keyshare.keyId, generation: keyshare.generation))
        #expect(try KeyshareBackup.openKeyshare(blob, password: "correct horse") == keyshare)
    }
}
