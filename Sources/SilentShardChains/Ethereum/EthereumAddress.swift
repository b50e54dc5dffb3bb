import Foundation
import MPCCrypto

/// A 20-byte Ethereum account address: the last 20 bytes of Keccak-256 of the uncompressed secp256k1
/// public key's 64 coordinate bytes (Ethereum Yellow Paper, eq. 284), shown with the EIP-55 mixed-case
/// checksum (<https://eips.ethereum.org/EIPS/eip-55>).
public struct EthereumAddress: Sendable, Hashable, CustomStringConvertible {
    /// The 20 address bytes.
    public let bytes: Data

    /// The address of a secp256k1 public key (33-byte compressed or 65-byte uncompressed SEC1), e.g. a
    /// `Keyshare`'s `publicKey` or a soft child's (`Keyshare.childPublicKey(path:)`).
    public init(publicKey: Data) throws(ChainError) {
        guard let point = try? Secp256k1.Point(bytes: [UInt8](publicKey)), let uncompressed = try? point.uncompressed() else {
            throw .invalidPublicKey
        }
        bytes = Data(Keccak256.hash(Array(uncompressed.dropFirst())).suffix(20))
    }

    /// Parses `0x` + 40 hex digits. All-lowercase and all-uppercase digits are accepted as they are; a
    /// mixed-case address must carry its EIP-55 checksum (`checksumMismatch` otherwise).
    public init(_ text: String) throws(ChainError) {
        guard text.hasPrefix("0x") || text.hasPrefix("0X") else { throw .invalidAddress(reason: "missing 0x") }
        let digits = Array(text.utf8.dropFirst(2))
        guard digits.count == 40 else { throw .invalidAddress(reason: "not 40 hex digits") }
        guard let decoded = try? Hex.decode(String(decoding: digits, as: UTF8.self)) else {
            throw .invalidAddress(reason: "not hex")
        }
        bytes = Data(decoded)
        let hasLower = digits.contains { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }
        let hasUpper = digits.contains { (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0) }
        if hasLower && hasUpper, "0x" + String(decoding: digits, as: UTF8.self) != checksummed { throw .checksumMismatch }
    }

    /// The EIP-55 form: hex digit i is uppercase when nibble i of Keccak-256(lowercase hex) is ≥ 8.
    public var checksummed: String {
        let lower = Array(Hex.encode([UInt8](bytes)).utf8)
        let digest = Keccak256.hash(lower)
        var out = [UInt8]()
        out.reserveCapacity(40)
        for (index, character) in lower.enumerated() {
            let nibble = index % 2 == 0 ? digest[index / 2] >> 4 : digest[index / 2] & 0x0F
            let isLetter = character >= UInt8(ascii: "a")
            out.append(isLetter && nibble >= 8 ? character - 32 : character)
        }
        return "0x" + String(decoding: out, as: UTF8.self)
    }

    /// The checksummed address.
    public var description: String { checksummed }

    /// The address with these 20 bytes (`bytes.count` must be 20: checked by the callers).
    init(uncheckedBytes bytes: Data) { self.bytes = bytes }

    /// The address with these 20 bytes; another length is `invalidAddress`.
    public init(bytes: Data) throws(ChainError) {
        guard bytes.count == 20 else { throw .invalidAddress(reason: "not 20 bytes") }
        self.bytes = bytes
    }
}
