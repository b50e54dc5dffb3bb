@_spi(InProcess) import MPCProtocols
import MPCCrypto
import SilentShardCore
import Testing

/// Runs hold secrets (shares, nonces, protocol states): `dump` and `description` show none of them.
@Suite("Session runs reveal no secrets")
struct SessionRunReflectionTests {
    @Test func aRunReflectsNoChildrenAndDescribesNoSecret() throws {
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        let instanceID = InstanceID(checked: [UInt8](repeating: 1, count: 32))
        let runs: [any SessionRun] = [
            try FROSTSignRun(keyshare: shares[0], signers: [0, 1], message: Array("m".utf8), path: [], using: &rng),
            try FROSTDKGRun.refresh(shares[1], partyCount: 2, threshold: 2, instanceID: instanceID, mode: .duo, groupID: nil,
                                    using: &rng),
            try FROSTPresignRun(keyshare: shares[0], signers: [0, 1], using: &rng),
        ]
        for run in runs {
            #expect(Mirror(reflecting: run).children.isEmpty, "\(type(of: run))")
            var dumped = ""
            dump(run, to: &dumped)
            let description = String(describing: run)
            for secret in [Hex.encode(shares[0].secretShare.bytes), Hex.encode(shares[1].secretShare.bytes)] {
                #expect(!dumped.contains(secret) && !description.contains(secret), "\(type(of: run))")
            }
        }
    }
}
