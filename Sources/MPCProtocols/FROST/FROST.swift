import MPCCrypto

/// FROST(Ed25519, SHA-512) threshold Schnorr signatures (RFC 9591) with a Pedersen DKG, refresh,
/// repair, import/export and BIP32-Ed25519 (Khovratovich–Law) public derivation.
///
/// Normative description: `docs/protocol/frost.md`. Every type here is a value or a pure function except
/// ``FROST/Presignature`` (a single-use object, see there). Randomness is always injected.
public enum FROST {
    public typealias Scalar = Ed25519.Scalar
    public typealias Point = Ed25519.Point

    /// RFC 9591 §6.1 context string.
    public static let contextString: [UInt8] = Array("FROST-ED25519-SHA512-v1".utf8)

    /// Domain-separated SilentShard hashes (keygen context, key id, transcript, echo digests); see docs/protocol/frost.md §5.
    static let domain = DomainHash(protocolLabel: "SilentShard-FROST-v1")

    /// The keyshare/payload format version.
    public static let version: UInt8 = 1
}

// MARK: - Identifiers

extension FROST {
    /// A FROST participant identifier: a non-zero scalar. SilentShard maps the 0-based
    /// `PartyIndex` i to the identifier i + 1 (so party 0 is identifier 1, as in RFC 9591's vectors).
    /// Larger values exist only for test vectors (`init(value:)`).
    public struct Identifier: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The integer value (≥ 1). Identifiers are compared by value, which equals scalar order here.
        public let value: UInt32

        /// The identifier of party `index` (index + 1).
        public init(party index: PartyIndex) { value = UInt32(index) + 1 }

        /// An identifier from its integer value; zero is not an identifier.
        public init?(value: UInt32) {
            guard value != 0 else { return nil }
            self.value = value
        }

        /// The identifier as a scalar (`value` < ℓ always).
        public var scalar: Scalar {
            Scalar(UInt64(value))
        }

        /// The party index this identifier stands for, when it is one of ours (1 … 256).
        public var party: PartyIndex? {
            value >= 1 && value <= 256 ? PartyIndex(value - 1) : nil
        }

        public static func < (a: Identifier, b: Identifier) -> Bool { a.value < b.value }
        public var description: String { "FROST.Identifier(\(value))" }
    }
}

// MARK: - RFC 9591 hash functions (§6.5, FROST(Ed25519, SHA-512))

extension FROST {
    static func reduce(_ wide: [UInt8]) -> Scalar {
        // A 64-byte input always reduces.
        (try? Scalar(reducingWide: wide)) ?? .zero
    }

    static func prefixed(_ label: String, _ message: [UInt8]) -> [UInt8] {
        contextString + Array(label.utf8) + message
    }

    /// H1: binding factors.
    static func h1(_ m: [UInt8]) -> Scalar { reduce(SHA512.hash(prefixed("rho", m))) }
    /// H2: the Schnorr challenge, plain SHA-512 as RFC 8032 (no context string).
    static func h2(_ m: [UInt8]) -> Scalar { reduce(SHA512.hash(m)) }
    /// H3: nonce derivation.
    static func h3(_ m: [UInt8]) -> Scalar { reduce(SHA512.hash(prefixed("nonce", m))) }
    /// H4: message digest.
    static func h4(_ m: [UInt8]) -> [UInt8] { SHA512.hash(prefixed("msg", m)) }
    /// H5: commitment-list digest.
    static func h5(_ m: [UInt8]) -> [UInt8] { SHA512.hash(prefixed("com", m)) }
    /// HDKG: the DKG proof-of-knowledge challenge (as the ZcashFoundation implementation).
    static func hdkg(_ m: [UInt8]) -> Scalar { reduce(SHA512.hash(prefixed("dkg", m))) }
}

// MARK: - Randomness

extension FROST {
    /// `count` bytes from an injected generator.
    static func randomBytes(_ count: Int, using rng: inout some RandomNumberGenerator) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count {
            let word = rng.next()
            for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
        }
        return Array(out.prefix(count))
    }
}

// MARK: - Polynomials and Lagrange interpolation

extension FROST {
    /// f(x) = Σ a_k x^k (Horner).
    static func evaluate(_ coefficients: [Scalar], at x: Scalar) -> Scalar {
        var acc = Scalar.zero
        for coefficient in coefficients.reversed() { acc = acc * x + coefficient }
        return acc
    }

    /// Σ φ_k x^k for Feldman commitments φ_k = a_k·B (public; not constant time in x, which is public).
    static func evaluate(commitments: [Point], at x: Scalar) -> Point {
        guard let first = commitments.first else { return .identity }
        var acc = first   // x^0 = 1: no multiplication
        var power = Scalar.one
        for commitment in commitments.dropFirst() {
            power *= x
            acc += power * commitment
        }
        return acc
    }

    /// The Lagrange coefficient of `identifier` for interpolation at `x` (0 for the secret) over
    /// `set`: Π_{j≠i} (x − x_j)/(x_i − x_j). Duplicates, or an identifier not in the set, are
    /// `invalidInput(collidingEvaluationPoints / invalidParameters)`.
    static func lagrange(_ identifier: Identifier, over set: [Identifier], at x: Scalar = .zero) throws(ProtocolError) -> Scalar {
        guard Set(set).count == set.count else { throw .invalidInput(.collidingEvaluationPoints) }
        guard set.contains(identifier) else { throw .invalidInput(.invalidParameters) }
        // The coefficients are public functions of the identifiers; each costs a scalar inversion.
        let key = LagrangeKey(identifier: identifier.value, set: set.map(\.value), x: x.bytes)
        if let cached = lagrangeCache.value(for: key) { return cached }
        let coefficient = try computeLagrange(identifier, over: set, at: x)
        lagrangeCache.insert(coefficient, for: key)
        return coefficient
    }

    private struct LagrangeKey: Hashable, Sendable {
        var identifier: UInt32
        var set: [UInt32]
        var x: [UInt8]
    }

    private static let lagrangeCache = BoundedCache<LagrangeKey, Scalar>(capacity: 1024)

    private static func computeLagrange(_ identifier: Identifier, over set: [Identifier], at x: Scalar) throws(ProtocolError) -> Scalar {
        let xi = identifier.scalar
        var numerator = Scalar.one
        var denominator = Scalar.one
        for other in set where other != identifier {
            numerator *= x - other.scalar
            denominator *= xi - other.scalar
        }
        do { return numerator * (try denominator.inverse()) } catch { throw .invalidInput(.collidingEvaluationPoints) }
    }
}
