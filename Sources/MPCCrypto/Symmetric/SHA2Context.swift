/// A reusable SHA-256 or SHA-512 context for hot loops: the backend's low-level state (OpenSSL's `SHA256_CTX`,
/// CommonCrypto's `CC_SHA256_CTX`, …) in one buffer allocated once, re-initialised per digest (no dispatch, no
/// allocation per digest), with a saved
/// midstate for inputs that share a prefix of whole blocks. Not thread-safe: one per task. The state
/// buffers are wiped when the context is freed (they may hold a secret seed's midstate).
public final class SHA2Context {
    private let kind: SHA2Algorithm
    private let stateSize: Int
    private let state: UnsafeMutableRawPointer
    private let midstate: UnsafeMutableRawPointer
    /// The digest length in bytes.
    public let byteCount: Int
    /// The block length in bytes (64 for SHA-256, 128 for SHA-512).
    public let blockByteCount: Int

    /// A context for `function` (SHA256 or SHA512).
    public init<Function: SHA2Function>(_ function: Function.Type) {
        byteCount = Function.byteCount
        kind = Function.algorithm
        stateSize = SHA2Backend.stateByteCount(kind)
        blockByteCount = kind.blockByteCount
        state = .allocate(byteCount: stateSize, alignment: 16)
        midstate = .allocate(byteCount: stateSize, alignment: 16)
        state.initializeMemory(as: UInt8.self, repeating: 0, count: stateSize)
        midstate.initializeMemory(as: UInt8.self, repeating: 0, count: stateSize)
        reset()
    }

    deinit {
        wipe(state, count: stateSize)
        wipe(midstate, count: stateSize)
        state.deallocate()
        midstate.deallocate()
    }

    /// Starts a new digest.
    public func reset() {
        SHA2Backend.initialize(kind, state: state)
    }

    /// Saves the state as it is now (after whole blocks of a common prefix, for `resetToMidstate`).
    public func saveMidstate() {
        midstate.copyMemory(from: state, byteCount: stateSize)
    }

    /// Starts a new digest from the state `saveMidstate` saved.
    public func resetToMidstate() {
        state.copyMemory(from: midstate, byteCount: stateSize)
    }

    /// Appends bytes.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        SHA2Backend.update(kind, state: state, bytes: base, count: bytes.count)
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
        let out = base.assumingMemoryBound(to: UInt8.self)
        SHA2Backend.finalize(kind, state: state, output: out)
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
