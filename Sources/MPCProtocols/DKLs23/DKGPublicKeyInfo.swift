import MPCCrypto

extension DKLsDKG {
    /// The public key information (PKI) of a refresh (dkls23.md §12.6): what every holder knows of the
    /// current key and sends to the parties outside the holders.
    ///
    /// PKI = u8(n) ‖ u8(t) ‖ key_id ‖ enc(P) ‖ enc(V) ‖ cc ‖ u8(#H) ‖ for k ∈ H: u8(k) ‖ sc(x_k) ‖ enc(S_k) ‖ enc(V_k)
    struct PublicKeyInfo: Sendable {
        let partyCount: Int
        let threshold: Int
        let keyId: [UInt8]
        let publicKey: Secp256k1.Point
        let vrfPublicKey: Secp256k1.Point
        let chainCode: [UInt8]
        let holders: [PartyIndex]
        let points: [PartyIndex: Secp256k1.Scalar]
        let shares: [PartyIndex: Secp256k1.Point]
        let vrfShares: [PartyIndex: Secp256k1.Point]
        let encoded: [UInt8]

        static func size(holderCount: Int) -> Int { 133 + 99 * holderCount }

        /// A holder's (or an old keyshare's) view.
        init(keyshare: DKLsKeyshare, holders: [PartyIndex]) throws(ProtocolError) {
            var writer = ByteWriter(capacity: Self.size(holderCount: holders.count))
            writer.append(uint8: UInt8(keyshare.partyCount))
            writer.append(uint8: UInt8(keyshare.threshold))
            writer.append(keyshare.keyId)
            try writer.append(keyshare.publicKey)
            try writer.append(keyshare.vrfPublicKey)
            writer.append(keyshare.rootChainCode)
            writer.append(uint8: UInt8(holders.count))
            var points: [PartyIndex: Secp256k1.Scalar] = [:], shares: [PartyIndex: Secp256k1.Point] = [:]
            var vrfShares: [PartyIndex: Secp256k1.Point] = [:]
            for k in holders {
                writer.append(uint8: k)
                writer.append(keyshare.evaluationPoints[Int(k)])
                try writer.append(keyshare.publicShares[Int(k)])
                try writer.append(keyshare.vrfPublicShares[Int(k)])
                points[k] = keyshare.evaluationPoints[Int(k)]
                shares[k] = keyshare.publicShares[Int(k)]
                vrfShares[k] = keyshare.vrfPublicShares[Int(k)]
            }
            self.init(partyCount: keyshare.partyCount, threshold: keyshare.threshold, keyId: keyshare.keyId,
                      publicKey: keyshare.publicKey, vrfPublicKey: keyshare.vrfPublicKey, chainCode: keyshare.rootChainCode,
                      holders: holders, points: points, shares: shares, vrfShares: vrfShares, encoded: writer.bytes)
        }

        init(partyCount: Int, threshold: Int, keyId: [UInt8], publicKey: Secp256k1.Point, vrfPublicKey: Secp256k1.Point,
             chainCode: [UInt8], holders: [PartyIndex], points: [PartyIndex: Secp256k1.Scalar],
             shares: [PartyIndex: Secp256k1.Point], vrfShares: [PartyIndex: Secp256k1.Point], encoded: [UInt8]) {
            self.partyCount = partyCount
            self.threshold = threshold
            self.keyId = keyId
            self.publicKey = publicKey
            self.vrfPublicKey = vrfPublicKey
            self.chainCode = chainCode
            self.holders = holders
            self.points = points
            self.shares = shares
            self.vrfShares = vrfShares
            self.encoded = encoded
        }

        /// Decodes a PKI received from holder `sender`.
        init(decoding bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            var reader = ByteReader(bytes, from: sender)
            let n = Int(try reader.readUInt8()), t = Int(try reader.readUInt8())
            let keyId = try reader.read(32)
            let publicKey = try reader.readSecp256k1Point()
            let vrfKey = try reader.readSecp256k1Point()
            let chainCode = try reader.read(32)
            let count = Int(try reader.readUInt8())
            var holders: [PartyIndex] = []
            var points: [PartyIndex: Secp256k1.Scalar] = [:], shares: [PartyIndex: Secp256k1.Point] = [:]
            var vrfShares: [PartyIndex: Secp256k1.Point] = [:]
            for _ in 0..<count {
                let k = try reader.readUInt8()
                guard Int(k) < n, holders.last.map({ $0 < k }) ?? true else {
                    throw .abort(party: sender, reason: .malformedMessage)
                }
                holders.append(k)
                points[k] = try reader.readSecp256k1Scalar(nonZero: true)
                shares[k] = try reader.readSecp256k1Point()
                vrfShares[k] = try reader.readSecp256k1Point()
            }
            try reader.finish()
            self.init(partyCount: n, threshold: t, keyId: keyId, publicKey: publicKey, vrfPublicKey: vrfKey,
                      chainCode: chainCode, holders: holders, points: points, shares: shares, vrfShares: vrfShares,
                      encoded: bytes)
        }

        /// λ_k^H for a holder k, over the holders' old points.
        func lagrange(_ k: PartyIndex) throws(ProtocolError) -> Secp256k1.Scalar {
            var numerator = Secp256k1.Scalar.one, denominator = Secp256k1.Scalar.one
            guard let xk = points[k] else { throw .abort(party: nil, reason: .sessionMismatch) }
            for other in holders where other != k {
                guard let xo = points[other] else { throw .abort(party: nil, reason: .sessionMismatch) }
                numerator *= xo
                denominator *= xo - xk
            }
            guard let inverse = try? denominator.inverse() else { throw .abort(party: nil, reason: .collidingEvaluationPoints) }
            return numerator * inverse
        }

        /// Σ_{k∈H} λ_k^H S_k = P and the same for V (dkls23.md §12.3 step 1).
        func checkConsistency() throws(ProtocolError) {
            var key = Secp256k1.Point.identity, vrfKey = Secp256k1.Point.identity
            for k in holders {
                let lambda = try lagrange(k)
                key += lambda * (shares[k] ?? .identity)
                vrfKey += lambda * (vrfShares[k] ?? .identity)
            }
            guard key == publicKey, vrfKey == vrfPublicKey else { throw .abort(party: nil, reason: .publicKeyMismatch) }
        }
    }
}
