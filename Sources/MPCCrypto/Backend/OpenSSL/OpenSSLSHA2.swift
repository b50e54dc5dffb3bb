#if !(canImport(CommonCrypto) || SILENTSHARD_COMMONCRYPTO_SHIM)
internal import COpenSSL

/// SHA-2 and HMAC on Linux: OpenSSL's low-level SHA-256/512 states (plain C structs: copyable midstates, no EVP
/// dispatch, no allocation per digest) and its one-shot HMAC.
enum OpenSSLSHA2: SHA2BackendInterface {
    static let name = "OpenSSL"

    static func stateByteCount(_ algorithm: SHA2Algorithm) -> Int {
        switch algorithm {
        case .sha256: silentshard_sha256_state_size()
        case .sha512: silentshard_sha512_state_size()
        }
    }

    static func initialize(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer) {
        switch algorithm {
        case .sha256: silentshard_sha256_init(state)
        case .sha512: silentshard_sha512_init(state)
        }
    }

    static func update(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer, bytes: UnsafeRawPointer, count: Int) {
        switch algorithm {
        case .sha256: silentshard_sha256_update(state, bytes, count)
        case .sha512: silentshard_sha512_update(state, bytes, count)
        }
    }

    static func finalize(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer, output: UnsafeMutablePointer<UInt8>) {
        switch algorithm {
        case .sha256: silentshard_sha256_final(state, output)
        case .sha512: silentshard_sha512_final(state, output)
        }
    }

    static func hmac(_ algorithm: SHA2Algorithm, key: [UInt8], data: [UInt8]) -> [UInt8] {
        let digest = algorithm == .sha256 ? OpenSSLAlgorithms.shared.sha256 : OpenSSLAlgorithms.shared.sha512
        var out = [UInt8](repeating: 0, count: algorithm.byteCount)
        var length: UInt32 = 0
        // OpenSSL wants non-null pointers even for empty inputs.
        let keyBytes = key.isEmpty ? [0] : key
        let input = data.isEmpty ? [0] : data
        _ = HMAC(digest, keyBytes, Int32(key.count), input, data.count, &out, &length)
        return out
    }
}
#endif
