import MPCCrypto

extension FROST {
    /// Repair of a lost share by ≥ t helpers (the repairable threshold scheme of Laing–Stinson as
    /// in the ZcashFoundation `repairable` module; docs/protocol/frost.md §11). Pure functions first, then
    /// the two parties' state machines.
    public enum Repair {
        /// Step 1 at helper i: λ_i(x_r)·s_i over the helper set, split into one random summand per
        /// helper (the last one makes the sum). Returns the summands in `helpers` order.
        public static func deltas(helpers: [Identifier], helper: Identifier, share: Scalar, lost: Identifier,
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [Scalar] {
            guard !helpers.contains(lost) else { throw .invalidInput(.invalidParameters) }
            let total = try FROST.lagrange(helper, over: helpers, at: lost.scalar) * share
            var out: [Scalar] = []
            var sum = Scalar.zero
            for _ in 0..<(helpers.count - 1) {
                let r = Scalar.random(using: &rng)
                out.append(r)
                sum += r
            }
            out.append(total - sum)
            return out
        }

        /// Step 2 at helper j: σ_j = Σ_i δ_{i→j}. Step 3 at the lost party: s_r = Σ_j σ_j.
        public static func sum(_ values: [Scalar]) -> Scalar {
            var acc = Scalar.zero
            for v in values { acc += v }
            return acc
        }
    }

    /// A helper in a repair: step-1 P2P δ to every other helper (tag 0x4102, 32 bytes, secret),
    /// then the step-2 P2P σ to the lost party (tag 0x4202, 32 bytes, secret).
    public struct RepairHelper: Sendable, CustomStringConvertible {
        public let keyshare: Keyshare
        public let helpers: [PartyIndex]
        public let lost: PartyIndex
        /// The step-1 messages, by recipient helper.
        public let step1Messages: [PartyIndex: [UInt8]]
        private var received: [PartyIndex: Scalar]

        /// `helpers` (≥ t, unique, without `lost`, containing this party).
        public init(keyshare: Keyshare, helpers: [PartyIndex], lost: PartyIndex,
                    using rng: inout some RandomNumberGenerator) throws(ProtocolError) {
            let sorted = helpers.sorted()
            guard Set(sorted).count == sorted.count, sorted.count >= Int(keyshare.threshold),
                  sorted.allSatisfy({ $0 < keyshare.parties }), lost < keyshare.parties, !sorted.contains(lost),
                  sorted.contains(keyshare.party) else { throw .invalidInput(.invalidParameters) }
            let deltas = try Repair.deltas(helpers: sorted.map { Identifier(party: $0) }, helper: keyshare.identifier,
                                           share: keyshare.secretShare, lost: Identifier(party: lost), using: &rng)
            var messages: [PartyIndex: [UInt8]] = [:]
            var own: [PartyIndex: Scalar] = [:]
            for (k, delta) in zip(sorted, deltas) {
                if k == keyshare.party { own[k] = delta } else { messages[k] = delta.bytes }
            }
            self.keyshare = keyshare
            self.helpers = sorted
            self.lost = lost
            self.step1Messages = messages
            self.received = own
        }

        /// Accepts helper `sender`'s δ (32 bytes, canonical).
        public mutating func receiveStep1(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            guard sender != keyshare.party, helpers.contains(sender) else { throw .abort(party: sender, reason: .unexpectedSender) }
            guard received[sender] == nil else { throw .abort(party: sender, reason: .duplicateMessage) }
            guard bytes.count == 32 else { throw .abort(party: sender, reason: .malformedMessage) }
            var r = ByteReader(bytes, from: sender)
            let delta = try r.readEd25519Scalar()
            try r.finish()
            received[sender] = delta
        }

        /// σ for the lost party, once every helper's δ is in.
        public func step2Message() throws(ProtocolError) -> [UInt8] {
            guard received.count == helpers.count else { throw .abort(party: nil, reason: .missingMessages) }
            return Repair.sum(Array(received.values)).bytes
        }

        public var description: String { "FROST.RepairHelper(party: \(keyshare.party), lost: \(lost), secrets redacted)" }
    }

    /// The party whose share is lost. It needs the key's public data (from a trusted backup or
    /// the helpers' signed setup); it checks the recovered share against its verifying share.
    public struct RepairRecipient: Sendable, CustomStringConvertible {
        public let party: PartyIndex
        public let helpers: [PartyIndex]
        private let template: (threshold: UInt8, parties: UInt8, publicKey: Point, generation: [UInt8],
                               chainCode: [UInt8], verifyingShares: [Point])
        private var sigmas: [PartyIndex: Scalar] = [:]

        public init(party: PartyIndex, helpers: [PartyIndex], threshold: UInt8, parties: UInt8, publicKey: Point,
                    generation: [UInt8], chainCode: [UInt8], verifyingShares: [Point]) throws(ProtocolError) {
            let sorted = helpers.sorted()
            guard Set(sorted).count == sorted.count, sorted.count >= Int(threshold), party < parties,
                  sorted.allSatisfy({ $0 < parties }), !sorted.contains(party),
                  verifyingShares.count == Int(parties) else { throw .invalidInput(.invalidParameters) }
            self.party = party
            self.helpers = sorted
            self.template = (threshold, parties, publicKey, generation, chainCode, verifyingShares)
        }

        /// Accepts helper `sender`'s σ (32 bytes, canonical).
        public mutating func receiveStep2(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            guard helpers.contains(sender) else { throw .abort(party: sender, reason: .unexpectedSender) }
            guard sigmas[sender] == nil else { throw .abort(party: sender, reason: .duplicateMessage) }
            guard bytes.count == 32 else { throw .abort(party: sender, reason: .malformedMessage) }
            var r = ByteReader(bytes, from: sender)
            let sigma = try r.readEd25519Scalar()
            try r.finish()
            sigmas[sender] = sigma
        }

        /// The repaired keyshare. A share that does not match Y_r is `abort(nil, .invalidShare)`
        /// (σ values cannot be checked one by one, so nobody is named).
        public func finish() throws(ProtocolError) -> Keyshare {
            guard sigmas.count == helpers.count else { throw .abort(party: nil, reason: .missingMessages) }
            let share = Repair.sum(Array(sigmas.values))
            guard Point(base: share) == template.verifyingShares[Int(party)] else {
                throw .abort(party: nil, reason: .invalidShare)
            }
            return try Keyshare(party: party, threshold: template.threshold, parties: template.parties,
                                publicKey: template.publicKey, generation: template.generation,
                                chainCode: template.chainCode, secretShare: share,
                                verifyingShares: template.verifyingShares)
        }

        public var description: String { "FROST.RepairRecipient(party: \(party), secrets redacted)" }
    }
}
