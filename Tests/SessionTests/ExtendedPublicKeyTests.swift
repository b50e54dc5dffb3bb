import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardCore
import Testing

/// `Keyshare.extendedPublicKey(network:path:)`: the SDK surface over BIP32 serialization (the values are
/// checked against bip-utils in `interop/test_dkls_lifecycle.py`).
@Suite("Keyshare extended public keys")
struct ExtendedPublicKeyTests {
    static func keyshares() throws -> [Keyshare] {
        var rng = SystemRandomNumberGenerator()
        return try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng).map { try Keyshare(dkls: $0, mode: .duo) }
    }

    @Test func rootAndChildrenParseBackWithTheirPlaceInTheTree() throws {
        let shares = try Self.keyshares()
        let root = try BIP32ExtendedPublicKey(base58: try shares[0].extendedPublicKey())
        #expect(root.version == BIP32ExtendedPublicKey.mainnetVersion && root.depth == 0)
        #expect(try root.publicKey.compressed() == [UInt8](shares[0].publicKey))
        #expect(root.chainCode == [UInt8](shares[0].rootChainCode))
        // Both parties' shares give the same xpubs; a child is at its depth, under its parent, at its index,
        // and its key is the one signatures under that path verify with.
        for path in ["m/0", "m/7/2147483647", "m/44/60/0/0/5"] {
            let texts = try shares.map { try $0.extendedPublicKey(network: .testnet, path: path) }
            #expect(texts[0] == texts[1] && texts[0].hasPrefix("tpub"))
            let child = try BIP32ExtendedPublicKey(base58: texts[0])
            let indices = try DerivationPath(path).indices
            #expect(child.version == BIP32ExtendedPublicKey.testnetVersion && Int(child.depth) == indices.count)
            #expect(child.childNumber == indices.last)
            #expect(try child.publicKey.compressed() == [UInt8](try shares[0].childPublicKey(path: path)))
            let parentPath = "m" + indices.dropLast().map { "/\($0)" }.joined()
            let parent = try BIP32ExtendedPublicKey(base58: try shares[0].extendedPublicKey(network: .testnet, path: parentPath))
            #expect(child.parentFingerprint == parent.fingerprint)
        }
    }

    @Test func hardenedAndMalformedPathsAreRefused() throws {
        let share = try Self.keyshares()[0]
        for path in ["m/0'", "m/1/2h", "m/x", "m/2147483648"] {
            #expect(throws: SilentShardError.self) { try share.extendedPublicKey(path: path) }
        }
    }
}
