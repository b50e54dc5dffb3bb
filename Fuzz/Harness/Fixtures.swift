import MPCCrypto

/// Builds a fixture value; a failure is a harness bug (never outside input), so it stops the process.
func fixture<T>(_ what: String, _ body: () throws -> T) -> T {
    do { return try body() } catch { fatalError("fuzz fixture \(what) failed: \(error)") }
}

/// Fixed keys and values, so seeds and fixtures are the same on every run.
enum FixedKeys {
    static func ed25519(_ byte: UInt8) -> Ed25519.SigningKey {
        fixture("Ed25519 key") { try Ed25519.SigningKey(seed: [UInt8](repeating: byte, count: 32)) }
    }

    static func x25519(_ byte: UInt8) -> X25519.PrivateKey {
        fixture("X25519 key") { try X25519.PrivateKey(rawRepresentation: [UInt8](repeating: byte, count: 32)) }
    }

    static func bytes(_ byte: UInt8, _ count: Int = 32) -> [UInt8] { [UInt8](repeating: byte, count: count) }
}
