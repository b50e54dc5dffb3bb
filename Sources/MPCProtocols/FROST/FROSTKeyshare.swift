import MPCCrypto

extension FROST {
    /// Party i's FROST keyshare (docs/protocol/frost.md §7). The secret share is never printed.
    ///
    /// Binary encoding (version 1, fixed length 164 + 64·n):
    /// `u8(version) ‖ u8(n) ‖ u8(t) ‖ u8(i) ‖ key_id[32] ‖ gen[32] ‖ enc(PK) ‖ cc[32] ‖ s_i[32] ‖
    ///  for k in 0..<n: enc(id_k) ‖ enc(Y_k)`.
    public struct Keyshare: Sendable, Equatable, CustomStringConvertible {
        /// This party's index (its FROST identifier is `party + 1`).
        public let party: PartyIndex
        /// Signing threshold t (2 ≤ t ≤ n).
        public let threshold: UInt8
        /// Number of parties n (≤ 255).
        public let parties: UInt8
        /// The group public key PK (the Ed25519 public key).
        public let publicKey: Point
        /// H("key-id"; enc(PK)); unchanged by refresh.
        public let keyId: [UInt8]
        /// Keyshare generation id: the DKG transcript hash; new after every refresh.
        public let generation: [UInt8]
        /// The root chain code for soft derivation.
        public let chainCode: [UInt8]
        /// s_i, the Shamir share of the group secret at identifier i + 1.
        public let secretShare: Scalar
        /// Y_k = s_k·B for every party k (index k).
        public let verifyingShares: [Point]

        /// Assembles and checks a keyshare (the checks of `init(encoded:)`); any failure is
        /// `invalidInput(.invalidKeyshare)`.
        public init(party: PartyIndex, threshold: UInt8, parties: UInt8, publicKey: Point, generation: [UInt8],
                    chainCode: [UInt8], secretShare: Scalar, verifyingShares: [Point]) throws(ProtocolError) {
            self.party = party
            self.threshold = threshold
            self.parties = parties
            self.publicKey = publicKey
            self.keyId = FROST.keyId(for: publicKey)
            self.generation = generation
            self.chainCode = chainCode
            self.secretShare = secretShare
            self.verifyingShares = verifyingShares
            try validate()
        }

        /// The FROST identifier of party k.
        public func identifier(of k: PartyIndex) -> Identifier { Identifier(party: k) }
        /// This party's identifier.
        public var identifier: Identifier { Identifier(party: party) }

        /// Checks: 2 ≤ t ≤ n, i < n, 32-byte gen and cc, PK and all Y_k valid non-identity points,
        /// s_i·B = Y_i, and every Y_k lies on the degree t − 1 polynomial through Y_0 … Y_{t−1} whose
        /// constant is PK, and that polynomial has degree exactly t − 1. `generation` and `chainCode`
        /// cannot be checked from the share itself: integrity at rest comes from the storage AEAD.
        func validate() throws(ProtocolError) {
            let bad = ProtocolError.invalidInput(.invalidKeyshare)
            guard threshold >= 2, threshold <= parties, party < parties,
                  verifyingShares.count == Int(parties), generation.count == 32, chainCode.count == 32,
                  !publicKey.isIdentity, !verifyingShares.contains(where: \.isIdentity) else { throw bad }
            guard Point(base: secretShare) == verifyingShares[Int(party)] else { throw bad }
            let base = (0..<threshold).map { Identifier(party: $0) }
            var constant = Point.identity
            for (k, id) in base.enumerated() { constant += (try FROST.lagrange(id, over: base)) * verifyingShares[k] }
            guard constant == publicKey else { throw bad }
            // Degree exactly t − 1: t − 1 shares must not already determine PK (a t-of-n key relabelled
            // with a larger t would pass the check above). An honest DKG fails this with probability ≈ 2^−252.
            let lower = Array(base.dropLast())
            var lowerConstant = Point.identity
            for (k, id) in lower.enumerated() { lowerConstant += (try FROST.lagrange(id, over: lower)) * verifyingShares[k] }
            guard lowerConstant != publicKey else { throw bad }
            for k in Int(threshold)..<Int(parties) {
                let x = Identifier(party: PartyIndex(k)).scalar
                var y = Point.identity
                for (j, id) in base.enumerated() { y += (try FROST.lagrange(id, over: base, at: x)) * verifyingShares[j] }
                guard y == verifyingShares[k] else { throw bad }
            }
        }

        /// Encoded size for n parties.
        public static func encodedSize(parties n: Int) -> Int { 164 + 64 * n }

        /// The versioned binary encoding (contains the secret share: store encrypted).
        public var encoded: [UInt8] {
            var w = ByteWriter(capacity: Self.encodedSize(parties: Int(parties)))
            w.append(uint8: FROST.version)
            w.append(uint8: parties)
            w.append(uint8: threshold)
            w.append(uint8: party)
            w.append(keyId)
            w.append(generation)
            w.append(publicKey)
            w.append(chainCode)
            w.append(secretShare)
            for k in 0..<parties {
                w.append(Identifier(party: k).scalar)
                w.append(verifyingShares[Int(k)])
            }
            return w.bytes
        }

        /// Strict decoding: exact length, version 1, canonical scalars and points, identifiers
        /// equal to k + 1, key id recomputed, and the checks of `validate()`. Any failure is
        /// `invalidInput(.invalidKeyshare)`.
        public init(encoded bytes: [UInt8]) throws(ProtocolError) {
            let bad = ProtocolError.invalidInput(.invalidKeyshare)
            do {
                var r = ByteReader(bytes, from: nil)
                guard try r.readUInt8() == FROST.version else { throw bad }
                let n = try r.readUInt8()
                guard bytes.count == Self.encodedSize(parties: Int(n)) else { throw bad }
                let t = try r.readUInt8()
                let i = try r.readUInt8()
                let keyId = try r.read(32)
                let gen = try r.read(32)
                let pk = try r.readEd25519Point()
                let cc = try r.read(32)
                let s = try r.readEd25519Scalar(nonZero: true)
                var shares: [Point] = []
                for k in 0..<n {
                    guard try r.readEd25519Scalar() == Identifier(party: k).scalar else { throw bad }
                    shares.append(try r.readEd25519Point())
                }
                try r.finish()
                try self.init(party: i, threshold: t, parties: n, publicKey: pk, generation: gen, chainCode: cc,
                              secretShare: s, verifyingShares: shares)
                guard self.keyId == keyId else { throw bad }
            } catch {
                throw bad
            }
        }

        /// Public fields compared normally, the secret share in constant time.
        public static func == (a: Keyshare, b: Keyshare) -> Bool {
            a.party == b.party && a.threshold == b.threshold && a.parties == b.parties && a.publicKey == b.publicKey
                && a.keyId == b.keyId && a.generation == b.generation && a.chainCode == b.chainCode
                && a.verifyingShares == b.verifyingShares && a.secretShare == b.secretShare
        }

        /// Public fields only.
        public var description: String {
            "FROST.Keyshare(party: \(party), \(threshold)-of-\(parties), publicKey: \(Hex.encode(publicKey.bytes)), secretShare: redacted)"
        }
    }

    /// key_id = H("key-id"; enc(PK)).
    public static func keyId(for publicKey: Point) -> [UInt8] {
        domain.hash("key-id", publicKey.bytes)
    }
}
