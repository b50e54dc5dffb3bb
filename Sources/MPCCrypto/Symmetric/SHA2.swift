internal import COpenSSL

/// A valid pointer for hashing zero bytes.
private let emptyInput: [UInt8] = [0]

/// The SHA-2 functions this module offers.
public enum SHA2Algorithm: Sendable {
    case sha256, sha512

    /// OpenSSL's EVP_MD (internal: no C type in a public signature).
    var messageDigest: OpaquePointer {
        switch self {
        case .sha256: OpenSSLAlgorithms.shared.sha256
        case .sha512: OpenSSLAlgorithms.shared.sha512
        }
    }
}

/// A hash function of the SHA-2 family (OpenSSL).
public protocol SHA2Function {
    /// Output length in bytes.
    static var byteCount: Int { get }
    /// Which function it is.
    static var algorithm: SHA2Algorithm { get }
}

extension SHA2Function {
    static var messageDigest: OpaquePointer { algorithm.messageDigest }
}

extension SHA2Function {
    /// The digest of `data`.
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hash(buffer: $0) }
    }

    /// The digest of the bytes in `buffer`.
    public static func hash(buffer: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        if let base = buffer.baseAddress {
            _ = EVP_Digest(base, buffer.count, &out, &length, messageDigest, nil)
        } else {
            _ = EVP_Digest(emptyInput, 0, &out, &length, messageDigest, nil)
        }
        return out
    }

    /// HMAC (RFC 2104) of `data` under `key`.
    public static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        // OpenSSL wants non-null pointers even for empty inputs.
        let keyBytes = key.isEmpty ? [0] : key
        let input = data.isEmpty ? [0] : data
        _ = HMAC(messageDigest, keyBytes, Int32(key.count), input, data.count, &out, &length)
        return out
    }
}

/// SHA-256 (FIPS 180-4).
public enum SHA256: SHA2Function {
    public static let byteCount = 32
    public static let algorithm = SHA2Algorithm.sha256
}

/// SHA-512 (FIPS 180-4).
public enum SHA512: SHA2Function {
    public static let byteCount = 64
    public static let algorithm = SHA2Algorithm.sha512
}

/// Incremental SHA-2 hashing for inputs that arrive in pieces.
public final class SHA2Hasher {
    private let context: OpaquePointer
    private let byteCount: Int

    /// A hasher for the given function, e.g. `SHA2Hasher(SHA256.self)`.
    public init<Function: SHA2Function>(_ function: Function.Type) {
        // EVP_MD_CTX_new fails only when memory is exhausted.
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new") }
        EVP_DigestInit_ex2(context, Function.messageDigest, nil)
        self.context = context
        self.byteCount = Function.byteCount
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Appends bytes.
    public func update(_ data: [UInt8]) {
        data.withUnsafeBytes { input in
            if let base = input.baseAddress { _ = EVP_DigestUpdate(context, base, input.count) }
        }
    }

    /// The digest; the hasher must not be used afterwards.
    public func finalize() -> [UInt8] {
        var out = [UInt8](repeating: 0, count: byteCount)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &out, &length)
        return out
    }
}
