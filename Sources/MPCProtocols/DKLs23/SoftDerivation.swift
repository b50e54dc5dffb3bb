import MPCCrypto

/// Soft (non-hardened) BIP32 derivation of the public key inside signing (spec §14).
public struct DerivationPath: Sendable, Equatable {
    /// The child indices, each < 2^31 for soft derivation (hardened ones carry bit 31).
    public let indices: [UInt32]

    /// The root "m".
    public static let root = DerivationPath(indices: [])

    init(indices: [UInt32]) { self.indices = indices }

    /// Parses "m" or "m/i_1/…/i_d": decimal indices without leading zeros, < 2^31, depth ≤ 255.
    /// Hardened markers (`'`, `h`) are refused unless `allowHardened` (hard derivation, dkls23.md §15).
    public init(_ text: String, allowHardened: Bool = false) throws(ProtocolError) {
        let invalid = ProtocolError.invalidInput(.invalidDerivationPath)
        var components = text.split(separator: "/", omittingEmptySubsequences: false)
        guard components.first == "m" else { throw invalid }
        components.removeFirst()
        guard components.count <= 255 else { throw invalid }
        var indices: [UInt32] = []
        for component in components {
            var digits = Substring(component)
            var hardened = false
            if let last = digits.last, last == "'" || last == "h" {
                guard allowHardened else { throw invalid }
                hardened = true
                digits = digits.dropLast()
            }
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  digits == "0" || digits.first != "0",
                  digits.count <= 10, let value = UInt32(digits), value < 1 << 31
            else { throw invalid }
            indices.append(hardened ? value | 1 << 31 : value)
        }
        self.indices = indices
    }

    /// path_bytes = u8(depth) ‖ u32(index)… (dkls23.md §4).
    public var bytes: [UInt8] {
        [UInt8(indices.count)] + indices.flatMap { DKLsHash.u32($0) }
    }

    /// CKDpub(P, cc, path) → (P′, cc′, δ) with P′ = P + δ·G (plain BIP32 public derivation).
    public func derive(publicKey: Secp256k1.Point, chainCode: [UInt8]) throws(ProtocolError)
        -> (publicKey: Secp256k1.Point, chainCode: [UInt8], tweak: Secp256k1.Scalar) {
        var point = publicKey, code = chainCode, tweak = Secp256k1.Scalar.zero
        for index in indices {
            guard index < 1 << 31 else { throw .invalidInput(.invalidDerivationPath) }
            let digest = SHA512.hmac(key: code, data: try DKLsHash.enc(point) + DKLsHash.u32(index))
            guard let left = try? Secp256k1.Scalar(bytes: digest[0..<32]) else {
                throw .invalidInput(.invalidDerivationPath)   // IL ≥ q: "invalid child index"
            }
            point = point + Secp256k1.Point(base: left)
            guard !point.isIdentity else { throw .invalidInput(.invalidDerivationPath) }
            code = Array(digest[32..<64])
            tweak += left
        }
        return (point, code, tweak)
    }
}
