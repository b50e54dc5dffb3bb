import Foundation
import MPCCrypto
import SilentShardChains
import Testing

/// Bitcoin addresses (HASH160 from MPCCrypto's RIPEMD-160 and SHA-256): the BIP-173 P2WPKH example,
/// P2PKH of the generator; `interop/test_chains.py` checks random keys against bip-utils.
@Suite("Bitcoin: HASH160, P2WPKH and P2PKH addresses")
struct BitcoinAddressTests {
    @Test func bip173AndGeneratorAddresses() throws {
        let generator = Data(try Hex.decode("0279BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798"))
        #expect(try BitcoinAddress.p2wpkh(publicKey: generator, network: .mainnet) == "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
        #expect(try BitcoinAddress.p2wpkh(publicKey: generator, network: .testnet) == "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx")
        #expect(try BitcoinAddress.p2wpkh(publicKey: generator, network: .regtest) == "bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080")
        #expect(try BitcoinAddress.p2pkh(publicKey: generator, network: .mainnet) == "1BgGZ9tcN4rm9KBzDn7KprQz87SZ26SAMH")
        #expect(try BitcoinAddress.p2pkh(publicKey: generator, network: .testnet) == "mrCDrCybB6J1vRfbwM5hemdJz73FwDBC8r")
        // An uncompressed key gives the compressed key's addresses (segwit needs the compressed form).
        let uncompressed = Data(try Secp256k1.Point(bytes: [UInt8](generator)).uncompressed())
        #expect(try BitcoinAddress.p2wpkh(publicKey: uncompressed, network: .mainnet) == "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4")
        #expect(throws: ChainError.invalidPublicKey) { try BitcoinAddress.p2wpkh(publicKey: Data(count: 33), network: .mainnet) }
    }
}
