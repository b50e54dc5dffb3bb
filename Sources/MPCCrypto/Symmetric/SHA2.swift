/// The SHA-2 functions this module offers.
public enum SHA2Algorithm: Sendable {
    case sha256, sha512

    /// The digest length in bytes.
    public var byteCount: Int { self == .sha256 ? 32 : 64 }
    /// The block length in bytes.
    public var blockByteCount: Int { self == .sha256 ? 64 : 128 }
}

/// A hash function of the SHA-2 family (the platform backend: OpenSSL on Linux, CommonCrypto on Apple).
public protocol SHA2Function {
    /// Output length in bytes.
    static var byteCount: Int { get }
    /// Which function it is.
    static var algorithm: SHA2Algorithm { get }
}

extension SHA2Function {
    /// The digest of `data`.
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hash(buffer: $0) }
    }

    /// The digest of the bytes in `buffer`.
    public static func hash(buffer: UnsafeRawBufferPointer) -> [UInt8] {
        let hasher = SHA2Hasher(algorithm)
        hasher.update(buffer)
        return hasher.finalize()
    }

    /// HMAC (RFC 2104) of `data` under `key`.
    public static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        SHA2Backend.hmac(algorithm, key: key, data: data)
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

/// Incremental SHA-2 hashing for inputs that arrive in pieces. The state is wiped when the hasher is freed.
public final class SHA2Hasher {
    private let algorithm: SHA2Algorithm
    private let state: UnsafeMutableRawPointer
    private let stateByteCount: Int

    /// A hasher for the given function, e.g. `SHA2Hasher(SHA256.self)`.
    public convenience init<Function: SHA2Function>(_ function: Function.Type) {
        self.init(Function.algorithm)
    }

    init(_ algorithm: SHA2Algorithm) {
        self.algorithm = algorithm
        stateByteCount = SHA2Backend.stateByteCount(algorithm)
        state = .allocate(byteCount: stateByteCount, alignment: 16)
        state.initializeMemory(as: UInt8.self, repeating: 0, count: stateByteCount)
        SHA2Backend.initialize(algorithm, state: state)
    }

    deinit {
        wipe(state, count: stateByteCount)
        state.deallocate()
    }

    /// Appends bytes.
    public func update(_ data: [UInt8]) {
        data.withUnsafeBytes { update($0) }
    }

    /// Appends the bytes in `buffer`.
    public func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        SHA2Backend.update(algorithm, state: state, bytes: base, count: buffer.count)
    }

    /// The digest; the hasher must not be used afterwards.
    public func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: algorithm.byteCount) { buffer, initialized in
            if let base = buffer.baseAddress { SHA2Backend.finalize(algorithm, state: state, output: base) }
            initialized = algorithm.byteCount
        }
    }
}
