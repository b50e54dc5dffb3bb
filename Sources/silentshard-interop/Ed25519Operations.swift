import MPCCrypto

/// Ed25519 signatures, scalars modulo ℓ (32-byte little-endian hex) and points (32-byte hex).
enum Ed25519Operations {
    typealias Scalar = Ed25519.Scalar
    typealias Point = Ed25519.Point

    /// `{seed, message}` → `{publicKey, signature}` (RFC 8032).
    static func sign(_ input: CaseInput) throws -> JSONValue {
        let key = try Ed25519.SigningKey(seed: input.bytes("seed"))
        let message = try input.bytes("message")
        return .object([
            "publicKey": .hex(key.verifyingKey.bytes),
            "signature": .hex(key.signature(for: message)),
        ])
    }

    /// `{publicKey, message, signature}` → `{valid}`; a malformed key is the case's error.
    static func verify(_ input: CaseInput) throws -> JSONValue {
        let key = try Ed25519.VerifyingKey(bytes: input.bytes("publicKey"))
        let valid = key.isValidSignature(try input.bytes("signature"), for: try input.bytes("message"))
        return .object(["valid": .bool(valid)])
    }

    /// `{a, b, wide?}` → scalar ring operations and the points a·B, b·B and their combinations.
    static func arithmetic(_ input: CaseInput) throws -> JSONValue {
        let a = try Scalar(bytes: input.bytes("a"))
        let b = try Scalar(bytes: input.bytes("b"))
        let aB = Point(base: a)
        let bB = Point(base: b)
        var out: [String: JSONValue] = [
            "sum": .hex((a + b).bytes),
            "difference": .hex((a - b).bytes),
            "product": .hex((a * b).bytes),
            "negation": .hex((-a).bytes),
            "inverse": ErrorReport.outcome { try a.inverse().bytes },
            "equal": .bool(a == b),
            "aB": .hex(aB.bytes),
            "bB": .hex(bB.bytes),
            "aBPlusBB": .hex((aB + bB).bytes),
            "aBMinusBB": .hex((aB - bB).bytes),
            "negatedAB": .hex((-aB).bytes),
            "bTimesAB": .hex((b * aB).bytes),
            "productB": .hex(Point(base: a * b).bytes),
            "sumB": .hex(Point(base: a + b).bytes),
            "differenceB": .hex(Point(base: a - b).bytes),
        ]
        if let wide = try input.optionalBytes("wide") {
            out["wide"] = ErrorReport.outcome { try Scalar(reducingWide: wide).bytes }
        }
        return .object(out)
    }

    /// A 32-byte encoding (bare hex) → `{point, withIdentity}`: what `Point(bytes:)` and
    /// `Point(bytes:allowingIdentity: true)` make of it (the re-encoding, or the error).
    static func decode(_ input: CaseInput) throws -> JSONValue {
        let bytes = try input.hexBytes()
        return .object([
            "point": ErrorReport.outcome { try Point(bytes: bytes).bytes },
            "withIdentity": ErrorReport.outcome { try Point(bytes: bytes, allowingIdentity: true).bytes },
        ])
    }
}
