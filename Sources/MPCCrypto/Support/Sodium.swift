internal import CSodium

/// libsodium needs `sodium_init()` once before use; every entry point that needs it reads `ready`.
enum Sodium {
    static let ready: Bool = sodium_init() >= 0

    @inline(__always) static func ensureReady() {
        precondition(ready, "sodium_init failed")
    }
}

/// Constant-time comparison of byte strings of equal length (different lengths compare unequal).
public func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return sodium_memcmp(a, b, a.count) == 0
}

/// Overwrites `count` bytes at `pointer` with zeros in a way the compiler cannot elide (libsodium's
/// `sodium_memzero`): for states that may hold a secret's midstate.
func wipe(_ pointer: UnsafeMutableRawPointer, count: Int) {
    sodium_memzero(pointer, count)
}
