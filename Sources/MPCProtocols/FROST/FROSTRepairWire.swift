import MPCCrypto

extension FROST.Repair {
    /// The key's public data a helper sends the lost party with its σ in a session's recovery (step 2,
    /// tag 0x4202: `σ (32) ‖ PKI`; `docs/protocol/session.md` §6.4): `u8 t ‖ u8 n ‖ PK (32) ‖ u8 len ‖
    /// generation (len) ‖ chain code (32) ‖ Y_0 … Y_{n−1} (32 each)`. Public, no secrets.
    public struct PublicKeyInfo: Sendable, Equatable {
        public var threshold: UInt8
        public var parties: UInt8
        public var publicKey: FROST.Point
        public var generation: [UInt8]
        public var chainCode: [UInt8]
        public var verifyingShares: [FROST.Point]

        /// The public data of `keyshare`.
        public init(keyshare: FROST.Keyshare) {
            threshold = keyshare.threshold
            parties = keyshare.parties
            publicKey = keyshare.publicKey
            generation = keyshare.generation
            chainCode = keyshare.chainCode
            verifyingShares = keyshare.verifyingShares
        }

        /// The wire encoding.
        public var encoded: [UInt8] {
            var out: [UInt8] = [threshold, parties] + publicKey.bytes
            out.append(UInt8(truncatingIfNeeded: generation.count))
            out += generation + chainCode
            for y in verifyingShares { out += y.bytes }
            return out
        }

        /// Decodes `bytes` from `sender`: 2 ≤ n ≤ 16, 1 ≤ t ≤ n, exact length, valid points; any
        /// malformation is `abort(sender, .malformedMessage)`.
        public init(bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            let bad = ProtocolError.abort(party: sender, reason: .malformedMessage)
            guard bytes.count >= 35 else { throw bad }
            let t = bytes[0], n = bytes[1]
            let genLength = Int(bytes[34])
            guard n >= 2, n <= 16, t >= 1, t <= n, bytes.count == 35 + genLength + 32 + 32 * Int(n) else { throw bad }
            guard let publicKey = try? FROST.Point(bytes: Array(bytes[2..<34])) else { throw bad }
            var offset = 35
            let generation = Array(bytes[offset..<(offset + genLength)])
            offset += genLength
            let chainCode = Array(bytes[offset..<(offset + 32)])
            offset += 32
            var shares: [FROST.Point] = []
            for _ in 0..<Int(n) {
                guard let y = try? FROST.Point(bytes: Array(bytes[offset..<(offset + 32)])) else { throw bad }
                shares.append(y)
                offset += 32
            }
            threshold = t
            parties = n
            self.publicKey = publicKey
            self.generation = generation
            self.chainCode = chainCode
            verifyingShares = shares
        }
    }
}

extension FROST.RepairHelper {
    /// The session's step-2 payload for the lost party (tag 0x4202): σ ‖ the key's ``FROST/Repair/PublicKeyInfo``.
    /// Needs every helper's δ.
    public func step2Payload() throws(ProtocolError) -> [UInt8] {
        try step2Message() + FROST.Repair.PublicKeyInfo(keyshare: keyshare).encoded
    }
}

extension FROST.RepairRecipient {
    /// The lost party from the key's public data as the helpers sent it.
    public init(party: PartyIndex, helpers: [PartyIndex], publicKeyInfo info: FROST.Repair.PublicKeyInfo) throws(ProtocolError) {
        try self.init(party: party, helpers: helpers, threshold: info.threshold, parties: info.parties, publicKey: info.publicKey,
                      generation: info.generation, chainCode: info.chainCode, verifyingShares: info.verifyingShares)
    }
}
