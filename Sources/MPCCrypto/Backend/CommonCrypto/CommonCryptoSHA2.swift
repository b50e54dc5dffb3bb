#if canImport(CommonCrypto) || SILENTSHARD_COMMONCRYPTO_SHIM
#if canImport(CommonCrypto)
import CommonCrypto
#else
internal import CCommonCryptoShim
#endif

/// SHA-2 and HMAC on Apple platforms: CommonCrypto's `CC_SHA256_CTX` / `CC_SHA512_CTX` (plain structs, so a
/// midstate is a copy; Apple silicon has SHA instructions) and `CCHmac`. Compiled on Linux CI against
/// `CCommonCryptoShim` (same C signatures) and run through MPCCryptoTests' known answers there.
enum CommonCryptoSHA2: SHA2BackendInterface {
    static let name = "CommonCrypto"

    static func stateByteCount(_ algorithm: SHA2Algorithm) -> Int {
        switch algorithm {
        case .sha256: MemoryLayout<CC_SHA256_CTX>.size
        case .sha512: MemoryLayout<CC_SHA512_CTX>.size
        }
    }

    static func initialize(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer) {
        switch algorithm {
        case .sha256: _ = CC_SHA256_Init(state.assumingMemoryBound(to: CC_SHA256_CTX.self))
        case .sha512: _ = CC_SHA512_Init(state.assumingMemoryBound(to: CC_SHA512_CTX.self))
        }
    }

    static func update(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer, bytes: UnsafeRawPointer, count: Int) {
        // CC_LONG is 32 bits: feed inputs of 4 GiB or more in pieces.
        var cursor = bytes, remaining = count
        while remaining > 0 {
            let piece = min(remaining, Int(UInt32.max))
            switch algorithm {
            case .sha256: _ = CC_SHA256_Update(state.assumingMemoryBound(to: CC_SHA256_CTX.self), cursor, CC_LONG(piece))
            case .sha512: _ = CC_SHA512_Update(state.assumingMemoryBound(to: CC_SHA512_CTX.self), cursor, CC_LONG(piece))
            }
            cursor += piece
            remaining -= piece
        }
    }

    static func finalize(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer, output: UnsafeMutablePointer<UInt8>) {
        switch algorithm {
        case .sha256: _ = CC_SHA256_Final(output, state.assumingMemoryBound(to: CC_SHA256_CTX.self))
        case .sha512: _ = CC_SHA512_Final(output, state.assumingMemoryBound(to: CC_SHA512_CTX.self))
        }
    }

    static func hmac(_ algorithm: SHA2Algorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: algorithm.byteCount)
        let function = CCHmacAlgorithm(algorithm == .sha256 ? kCCHmacAlgSHA256 : kCCHmacAlgSHA512)
        key.withUnsafeBytes { keyBytes in
            data.withUnsafeBytes { dataBytes in
                out.withUnsafeMutableBytes { output in
                    CCHmac(function, keyBytes.baseAddress, keyBytes.count, dataBytes.baseAddress, dataBytes.count, output.baseAddress)
                }
            }
        }
        return out
    }
}
#endif
