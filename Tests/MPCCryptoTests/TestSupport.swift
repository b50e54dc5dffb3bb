import MPCCrypto

/// Hex literal for tests (test inputs are fixed, so a malformed literal is a test bug).
func hex(_ text: String) -> [UInt8] {
    (try? Hex.decode(text)) ?? []
}

/// The secp256k1 order n as a big-endian hex string.
let secp256k1OrderHex = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"

/// Big-endian 32-byte encoding of n − k for a small k.
func orderMinus(_ k: UInt8) -> [UInt8] {
    var bytes = hex(secp256k1OrderHex)
    var borrow = Int(k)
    for index in stride(from: 31, through: 0, by: -1) where borrow > 0 {
        let value = Int(bytes[index]) - borrow
        bytes[index] = UInt8((value + 256) % 256)
        borrow = value < 0 ? 1 : 0
    }
    return bytes
}
