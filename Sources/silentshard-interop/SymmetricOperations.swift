import MPCCrypto

/// ChaCha20-Poly1305 and XChaCha20-Poly1305.
enum AEADOperations {
    /// `{mode: "seal" | "open", key, nonce, aad?, data}` → `{output}` (ciphertext ‖ tag, or plaintext).
    static func chaCha20Poly1305(_ input: CaseInput) throws -> JSONValue {
        try run(input, seal: ChaCha20Poly1305.seal, open: ChaCha20Poly1305.open)
    }

    /// As `chaCha20Poly1305`, with 24-byte nonces.
    static func xChaCha20Poly1305(_ input: CaseInput) throws -> JSONValue {
        try run(input, seal: XChaCha20Poly1305.seal, open: XChaCha20Poly1305.open)
    }

    private typealias Cipher = ([UInt8], [UInt8], [UInt8], [UInt8]) throws(CryptoError) -> [UInt8]

    private static func run(_ input: CaseInput, seal: Cipher, open: Cipher) throws -> JSONValue {
        let key = try input.bytes("key")
        let nonce = try input.bytes("nonce")
        let aad = try input.optionalBytes("aad") ?? []
        let data = try input.bytes("data")
        let output: [UInt8]
        switch try input.string("mode") {
        case "seal": output = try seal(data, key, nonce, aad)
        case "open": output = try open(data, key, nonce, aad)
        default: throw InteropError.outOfRange(field: "mode")
        }
        return .object(["output": .hex(output)])
    }
}

/// SHA-2, HMAC, the AES-CTR PRG and domain-separated hashing.
enum HashOperations {
    /// The most bytes one case may ask a generator for.
    static let maximumOutput = 1 << 20

    /// Hex data (bare, or `{data}`) → `{digest, incremental}`; `incremental` feeds `SHA2Hasher`
    /// the data in three pieces.
    static func sha256(_ input: CaseInput) throws -> JSONValue { try digest(input, SHA256.self) }

    /// As `sha256`, for SHA-512.
    static func sha512(_ input: CaseInput) throws -> JSONValue { try digest(input, SHA512.self) }

    /// `{key, data}` → `{mac}`.
    static func hmacSHA256(_ input: CaseInput) throws -> JSONValue { try hmac(input, SHA256.self) }

    /// `{key, data}` → `{mac}`.
    static func hmacSHA512(_ input: CaseInput) throws -> JSONValue { try hmac(input, SHA512.self) }

    private static func digest<Function: SHA2Function>(_ input: CaseInput, _ function: Function.Type) throws -> JSONValue {
        let data = try input.hexBytes()
        let hasher = SHA2Hasher(function)
        let third = data.count / 3
        hasher.update(Array(data[..<third]))
        hasher.update(Array(data[third..<(2 * third)]))
        hasher.update(Array(data[(2 * third)...]))
        return .object(["digest": .hex(function.hash(data)), "incremental": .hex(hasher.finalize())])
    }

    private static func hmac<Function: SHA2Function>(_ input: CaseInput, _ function: Function.Type) throws -> JSONValue {
        .object(["mac": .hex(function.hmac(key: try input.bytes("key"), data: try input.bytes("data")))])
    }

    /// `{seed, counterBlock?, count, split?}` → `{stream, pieces}`: `count` bytes of the key stream,
    /// drawn at once and (from a fresh generator) as `split` bytes then the rest.
    static func aesPRG(_ input: CaseInput) throws -> JSONValue {
        let seed = try input.bytes("seed")
        let counterBlock = try input.optionalBytes("counterBlock") ?? [UInt8](repeating: 0, count: 16)
        let count = try input.int("count", in: 0...maximumOutput)
        let split = try input.optionalInt("split", in: 0...count) ?? count / 2
        let whole = try AESPRG(seed: seed, counterBlock: counterBlock).bytes(count: count)
        let generator = try AESPRG(seed: seed, counterBlock: counterBlock)
        let pieces = generator.bytes(count: split) + generator.bytes(count: count - split)
        return .object(["stream": .hex(whole), "pieces": .hex(pieces)])
    }

    /// `{protocol, tag, fields: [hex], prgCount?}` → `{frame, hash, hash512, scalar, prg?}` where
    /// `prg` is `prg(seed: fields[0], label: fields[1], count: prgCount)`.
    static func domainHash(_ input: CaseInput) throws -> JSONValue {
        let hasher = DomainHash(protocolLabel: try input.string("protocol"))
        let tag = try input.string("tag")
        let fields = try input.byteArrays("fields")
        var out: [String: JSONValue] = [
            "frame": .hex(hasher.frame(tag, fields)),
            "hash": .hex(hasher.hash(tag, fields: fields)),
            "hash512": .hex(hasher.hash512(tag, fields: fields)),
            "scalar": .hex(hasher.hashToScalar(tag, fields: fields).bytes),
        ]
        if let count = try input.optionalInt("prgCount", in: 0...maximumOutput) {
            guard fields.count >= 2 else { throw InteropError.missingField("fields[1]") }
            out["prg"] = .hex(hasher.prg(seed: fields[0], label: fields[1], count: count))
        }
        return .object(out)
    }
}
