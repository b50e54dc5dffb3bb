import MPCCrypto

/// secp256k1 scalars, points and ECDSA. Scalars are 32-byte big-endian hex; points SEC1 hex.
enum Secp256k1Operations {
    typealias Scalar = Secp256k1.Scalar
    typealias Point = Secp256k1.Point

    /// `{a, b, wide?, narrow?, exponent?}` → the ring and group operations on a and b.
    ///
    /// Point results are compressed encodings, or `{"error": "identityPoint"}` for the identity.
    static func arithmetic(_ input: CaseInput) throws -> JSONValue {
        let a = try Scalar(bytes: input.bytes("a"))
        let b = try Scalar(bytes: input.bytes("b"))
        let aG = Point(base: a)
        let bG = Point(base: b)
        var out: [String: JSONValue] = [
            "sum": .hex((a + b).bytes),
            "difference": .hex((a - b).bytes),
            "product": .hex((a * b).bytes),
            "negation": .hex((-a).bytes),
            "inverse": ErrorReport.outcome { try a.inverse().bytes },
            "equal": .bool(a == b),
            "aG": ErrorReport.outcome { try aG.compressed() },
            "aGUncompressed": ErrorReport.outcome { try aG.uncompressed() },
            "negatedAG": ErrorReport.outcome { try (-aG).compressed() },
            "aGPlusBG": ErrorReport.outcome { try (aG + bG).compressed() },
            "aGMinusBG": ErrorReport.outcome { try (aG - bG).compressed() },
            "bTimesAG": ErrorReport.outcome { try (b * aG).compressed() },
            "bTimesAGEqualsProductG": .bool(b * aG == Point(base: a * b)),
        ]
        if let wide = try input.optionalBytes("wide") {
            out["wide"] = ErrorReport.outcome { try Scalar(reducingWide: wide).bytes }
        }
        if let narrow = try input.optionalBytes("narrow") {
            out["narrow"] = ErrorReport.outcome { try Scalar(reducing: narrow).bytes }
        }
        if let exponent = try input.optionalBytes("exponent") {
            out["power"] = .hex(a.power(publicExponent: exponent).bytes)
        }
        return .object(out)
    }

    /// A SEC1 encoding (bare hex) → `{compressed, uncompressed, strictCompressed}` of the decoded point.
    /// `strictCompressed` is what `Point(compressed:)` makes of the same input.
    static func decode(_ input: CaseInput) throws -> JSONValue {
        let bytes = try input.hexBytes()
        let point = try Point(bytes: bytes)
        return .object([
            "compressed": .hex(try point.compressed()),
            "uncompressed": .hex(try point.uncompressed()),
            "strictCompressed": ErrorReport.outcome { try Point(compressed: bytes).compressed() },
        ])
    }

    /// `{privateKey, hash}` → `{r, s, recoveryId, der, lowS, publicKey, recovered, selfVerified}`.
    static func sign(_ input: CaseInput) throws -> JSONValue {
        let privateKey = try Scalar(bytes: input.bytes("privateKey"))
        let hash = try input.bytes("hash")
        let signature = try Secp256k1.ECDSA.sign(hash: hash, privateKey: privateKey)
        let publicKey = Point(base: privateKey)
        return .object([
            "r": .hex(signature.r),
            "s": .hex(signature.s),
            "recoveryId": .int(Int(signature.recoveryId)),
            "der": .hex(signature.der),
            "lowS": .bool(signature.isLowS),
            "publicKey": .hex(try publicKey.compressed()),
            "recovered": ErrorReport.outcome {
                try Secp256k1.ECDSA.recoverPublicKey(signature, hash: hash).compressed()
            },
            "selfVerified": .bool(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: publicKey)),
        ])
    }

    /// `{r, s, hash, publicKey, recoveryId?}` → `{valid, lowS, recovered?}`. `recovered` (with a
    /// recovery id) is the compressed key `recoverPublicKey` finds, or its error.
    static func verify(_ input: CaseInput) throws -> JSONValue {
        let recoveryId = try input.optionalInt("recoveryId", in: 0...255)
        let signature = try Secp256k1.ECDSASignature(
            r: input.bytes("r"), s: input.bytes("s"), recoveryId: UInt8(recoveryId ?? 0))
        let hash = try input.bytes("hash")
        let publicKey = try Point(bytes: input.bytes("publicKey"))
        var out: [String: JSONValue] = [
            "valid": .bool(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: publicKey)),
            "lowS": .bool(signature.isLowS),
        ]
        if recoveryId != nil {
            out["recovered"] = ErrorReport.outcome {
                try Secp256k1.ECDSA.recoverPublicKey(signature, hash: hash).compressed()
            }
        }
        return .object(out)
    }
}
