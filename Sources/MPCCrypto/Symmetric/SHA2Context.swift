import COpenSSL

/// A reusable SHA-2 context for hot loops: one `EVP_MD_CTX` allocated once and re-initialised per
/// digest, so hashing many short inputs costs no allocation. Not thread-safe: one per task.
public final class SHA2Context {
    private let context: OpaquePointer
    private let messageDigest: OpaquePointer
    /// The digest length in bytes.
    public let byteCount: Int

    public init<Function: SHA2Function>(_ function: Function.Type) {
        // EVP_MD_CTX_new fails only when memory is exhausted.
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new") }
        self.context = context
        self.messageDigest = Function.messageDigest
        self.byteCount = Function.byteCount
        EVP_DigestInit_ex2(context, messageDigest, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Starts a new digest.
    public func reset() {
        EVP_DigestInit_ex2(context, messageDigest, nil)
    }

    /// Appends bytes.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        if let base = bytes.baseAddress, bytes.count > 0 { EVP_DigestUpdate(context, base, bytes.count) }
    }

    /// Appends bytes.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Appends a big-endian u32.
    public func update(uint32 value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { update($0) }
    }

    /// Appends one byte.
    public func update(uint8 value: UInt8) {
        withUnsafeBytes(of: value) { update($0) }
    }

    /// Writes the digest into `output` (at least `byteCount` bytes) and starts a new digest.
    public func finalize(into output: UnsafeMutableRawBufferPointer) {
        guard let base = output.baseAddress, output.count >= byteCount else { return }
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, base.assumingMemoryBound(to: UInt8.self), &length)
        reset()
    }

    /// The digest; starts a new digest.
    public func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { buffer, initialized in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            initialized = byteCount
        }
    }
}
