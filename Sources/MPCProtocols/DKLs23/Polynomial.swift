import MPCCrypto

/// A secret polynomial f(X) = a_0 + a_1 X + … + a_{t−1} X^{t−1} over Z_q (dkls23.md §6.3).
struct SecretPolynomial: Sendable {
    let coefficients: [Secp256k1.Scalar]

    /// Fresh random non-zero coefficients, the constant given (or random when nil).
    static func random<R: RandomNumberGenerator>(degreeBelow count: Int, constant: Secp256k1.Scalar?, using rng: inout R) -> SecretPolynomial {
        var coefficients = [constant ?? .random(using: &rng)]
        for _ in 1..<count { coefficients.append(.random(using: &rng)) }
        return SecretPolynomial(coefficients: coefficients)
    }

    /// f(x) by Horner's rule.
    func evaluate(at x: Secp256k1.Scalar) -> Secp256k1.Scalar {
        var result = Secp256k1.Scalar.zero
        for coefficient in coefficients.reversed() { result = result * x + coefficient }
        return result
    }

    /// The Feldman commitments a_k·G.
    var commitments: [Secp256k1.Point] { coefficients.map { Secp256k1.Point(base: $0) } }
}

enum Feldman {
    /// Σ_k y^k·A_k by Horner's rule (public values; A_0 may be the identity).
    static func evaluate(_ commitments: [Secp256k1.Point], at y: Secp256k1.Scalar) -> Secp256k1.Point {
        var result = Secp256k1.Point.identity
        for commitment in commitments.reversed() { result = y * result + commitment }
        return result
    }
}

enum Lagrange {
    /// The coefficient of party i's value for interpolation at `x` over the set T:
    /// Π_{k∈T, k≠i} (x − x_k)·(x_i − x_k)^{−1} (public values).
    static func coefficient(of i: PartyIndex, in set: [PartyIndex], points: [Secp256k1.Scalar],
                            at x: Secp256k1.Scalar) throws(ProtocolError) -> Secp256k1.Scalar {
        var numerator = Secp256k1.Scalar.one, denominator = Secp256k1.Scalar.one
        let xi = points[Int(i)]
        for k in set where k != i {
            numerator *= x - points[Int(k)]
            denominator *= xi - points[Int(k)]
        }
        guard let inverse = try? denominator.inverse() else { throw .abort(party: nil, reason: .collidingEvaluationPoints) }
        return numerator * inverse
    }

    /// λ_i^T = Π_{k∈T, k≠i} x_k·(x_k − x_i)^{−1} for interpolation at 0 (points are public and distinct).
    static func coefficient(of i: PartyIndex, in set: [PartyIndex], points: [Secp256k1.Scalar]) throws(ProtocolError) -> Secp256k1.Scalar {
        var numerator = Secp256k1.Scalar.one, denominator = Secp256k1.Scalar.one
        let xi = points[Int(i)]
        for k in set where k != i {
            numerator *= points[Int(k)]
            denominator *= points[Int(k)] - xi
        }
        guard let inverse = try? denominator.inverse() else { throw .abort(party: nil, reason: .collidingEvaluationPoints) }
        return numerator * inverse
    }
}
