import MPCCrypto

extension DKLsKeyshare {
    /// Bytes per peer: zero seed, Bob's GGM roots, Δ and Alice's co-paths (dkls23.md §11).
    static let pairwiseSize = 32 + 32 * SoftSpokenOT.blockCount + 32 + 32 * 256

    /// The encoded size for n parties.
    static func size(partyCount n: Int) -> Int { 230 + 98 * n + pairwiseSize * (n - 1) }

    /// The versioned binary encoding (dkls23.md §11 field order, peers ascending).
    public func serialized() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size(partyCount: partyCount))
        writer.append(uint8: Self.version)
        writer.append(uint8: UInt8(partyCount))
        writer.append(uint8: UInt8(threshold))
        writer.append(uint8: partyIndex)
        writer.append(keyId)
        writer.append(generation)
        // Points of a loaded or generated keyshare are never the identity.
        try? writer.append(publicKey)
        writer.append(rootChainCode)
        try? writer.append(vrfPublicKey)
        writer.append(share)
        writer.append(vrfShare)
        for k in 0..<partyCount {
            writer.append(evaluationPoints[k])
            try? writer.append(publicShares[k])
            try? writer.append(vrfPublicShares[k])
        }
        for peer in peers {
            guard let setup = pairwise[peer] else { continue }
            writer.append(setup.zeroSeed)
            for seed in setup.receiver.roots { writer.append(seed) }
            writer.append(setup.sender.delta)
            for seed in setup.sender.coPath { writer.append(seed) }
        }
        return writer.bytes
    }

    /// Decodes and checks a keyshare (dkls23.md §11 "checks when a keyshare is loaded"). Another format
    /// version (such as 1, the KOS keyshares of protocol v1) is `invalidInput(.unsupportedKeyshareVersion)`;
    /// any other failure is `invalidInput(.invalidKeyshare)`. The OT setups are expanded here (GGM
    /// leaves, kept in memory with the keyshare).
    public init(serialized bytes: [UInt8]) throws(ProtocolError) {
        let invalid = ProtocolError.invalidInput(.invalidKeyshare)
        guard let version = bytes.first else { throw invalid }
        guard version == Self.version else { throw .invalidInput(.unsupportedKeyshareVersion) }
        var reader = ByteReader(bytes, from: nil)
        do {
            _ = try reader.readUInt8()
            let n = Int(try reader.readUInt8()), t = Int(try reader.readUInt8())
            let i = try reader.readUInt8()
            guard t >= 2, t <= n, Int(i) < n,
                  bytes.count == Self.size(partyCount: n) else { throw invalid }
            let keyId = try reader.read(32), generation = try reader.read(32)
            let publicKey = try reader.readSecp256k1Point()
            let chainCode = try reader.read(32)
            let vrfKey = try reader.readSecp256k1Point()
            let share = try reader.readSecp256k1Scalar(nonZero: true)
            let vrfShare = try reader.readSecp256k1Scalar(nonZero: true)
            var points: [Secp256k1.Scalar] = [], shares: [Secp256k1.Point] = [], vrfShares: [Secp256k1.Point] = []
            for _ in 0..<n {
                points.append(try reader.readSecp256k1Scalar(nonZero: true))
                shares.append(try reader.readSecp256k1Point())
                vrfShares.append(try reader.readSecp256k1Point())
            }
            var pairwise: [PartyIndex: PairwiseSetup] = [:]
            for peer in (0..<PartyIndex(n)) where peer != i {
                let zeroSeed = try reader.read(32)
                let roots = try (0..<SoftSpokenOT.blockCount).map { _ throws(ProtocolError) in try reader.read(32) }
                let delta = try reader.read(32)
                let coPath = try (0..<256).map { _ throws(ProtocolError) in try reader.read(32) }
                pairwise[peer] = PairwiseSetup(zeroSeed: zeroSeed,
                                               receiver: SoftSpokenOT.ReceiverSetup(roots: roots),
                                               sender: SoftSpokenOT.SenderSetup(delta: delta, coPath: coPath))
            }
            try reader.finish()
            self.init(partyCount: n, threshold: t, partyIndex: i, keyId: keyId, generation: generation,
                      publicKey: publicKey, rootChainCode: chainCode, vrfPublicKey: vrfKey,
                      evaluationPoints: points, publicShares: shares, vrfPublicShares: vrfShares,
                      share: share, vrfShare: vrfShare, pairwise: pairwise)
        } catch {
            throw invalid
        }
        try validate()
    }

    /// The consistency checks of dkls23.md §11.
    func validate() throws(ProtocolError) {
        let invalid = ProtocolError.invalidInput(.invalidKeyshare)
        guard Set(evaluationPoints.map(\.bytes)).count == partyCount,
              Secp256k1.Point(base: share) == publicShares[Int(partyIndex)],
              Secp256k1.Point(base: vrfShare) == vrfPublicShares[Int(partyIndex)],
              let encodedKey = try? DKLsHash.enc(publicKey),
              keyId == DKLsHash.h("key-id", encodedKey)
        else { throw invalid }
        // The first t public shares determine the polynomials: they must interpolate to P and V at 0
        // and to every other party's public shares at its point.
        let first = (0..<PartyIndex(threshold)).map { $0 }
        var key = Secp256k1.Point.identity, vrfKey = Secp256k1.Point.identity
        for k in first {
            let lambda = try Lagrange.coefficient(of: k, in: first, points: evaluationPoints)
            key += lambda * publicShares[Int(k)]
            vrfKey += lambda * vrfPublicShares[Int(k)]
        }
        guard key == publicKey, vrfKey == vrfPublicKey else { throw invalid }
        for other in PartyIndex(threshold)..<PartyIndex(partyCount) {
            var share = Secp256k1.Point.identity, vrfShare = Secp256k1.Point.identity
            for k in first {
                let lambda = try Lagrange.coefficient(of: k, in: first, points: evaluationPoints, at: evaluationPoints[Int(other)])
                share += lambda * publicShares[Int(k)]
                vrfShare += lambda * vrfPublicShares[Int(k)]
            }
            guard share == publicShares[Int(other)], vrfShare == vrfPublicShares[Int(other)] else { throw invalid }
        }
    }
}
