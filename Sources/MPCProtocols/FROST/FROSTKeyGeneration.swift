import MPCCrypto

extension FROST {
    /// What a DKG run produces (docs/protocol/frost.md §8).
    public enum KeygenMode: Sendable {
        /// A fresh key: every party contributes a random constant with a proof of knowledge and a
        /// committed chain-code contribution.
        case keygen
        /// New shares of the same key: every party's constant is 0 (its φ_0 is the identity and is
        /// not sent). All n parties of the keyshare take part.
        case refresh(Keyshare)
        /// An existing secret split by `importer` and re-randomised by everyone (fused dealer split +
        /// refresh, like DKLs23 spec §12.7).
        case importKey(ImportedKey)
    }

    /// The public setup of an import, and the secret only at the importer.
    public struct ImportedKey: Sendable, CustomStringConvertible {
        public let importer: PartyIndex
        public let publicKey: Point
        public let chainCode: [UInt8]
        /// The secret scalar x (x·B = publicKey); `nil` at every party but the importer.
        public let secret: Scalar?

        /// Every party but the importer passes `secret: nil`. `invalidInput(.invalidParameters)`
        /// when the chain code is not 32 bytes or the secret does not match the public key.
        public init(importer: PartyIndex, publicKey: Point, chainCode: [UInt8], secret: Scalar? = nil) throws(ProtocolError) {
            guard chainCode.count == 32, !publicKey.isIdentity else { throw .invalidInput(.invalidParameters) }
            if let secret, Point(base: secret) != publicKey { throw .invalidInput(.publicKeyMismatch) }
            self.importer = importer
            self.publicKey = publicKey
            self.chainCode = chainCode
            self.secret = secret
        }

        public var description: String { "FROST.ImportedKey(importer: \(importer), publicKey: \(Hex.encode(publicKey.bytes)))" }
    }

    /// One party's DKG state machine (keygen, refresh, import). Two rounds:
    /// 1. BCAST `round1Message` (tag 0x0101); feed every peer's with `receiveRound1`.
    /// 2. P2P `round2Messages()` (tag 0x0202, one per peer, secret: the session layer encrypts them);
    ///    feed every peer's with `receiveRound2`; then `finish()`.
    /// A rejected message never changes the state. Sessions drive it through its round states
    /// (``start(party:threshold:parties:sessionId:mode:using:)``, ``Round1State``, ``Round2State``); the
    /// per-message functions stay for tests that feed one message at a time.
    public struct KeyGeneration: Sendable, CustomStringConvertible {
        public let party: PartyIndex
        public let threshold: UInt8
        public let parties: UInt8
        public let mode: KeygenMode
        /// The 32-byte keygen context: H("dkg/ctx"; u8(op), session id, u8(n), u8(t), mode data).
        public let context: [UInt8]
        /// This party's round-1 broadcast.
        public let round1Message: [UInt8]

        private let coefficients: [Scalar]          // secret
        private let chainCodeContribution: [UInt8]  // keygen only
        private var round1: [PartyIndex: Round1] = [:]
        private var round1Raw: [PartyIndex: [UInt8]] = [:]
        private var round2: [PartyIndex: Round2] = [:]

        struct Round1: Sendable {
            /// φ_0 … φ_{t−1} (φ_0 implied for refresh/import).
            let commitments: [Point]
            let chainCodeCommitment: [UInt8]
        }

        struct Round2: Sendable {
            let share: Scalar
            let chainCode: [UInt8]
        }

        var isKeygen: Bool { if case .keygen = mode { return true } else { return false } }

        /// Starts party `party` of a t-of-n run. `sessionId` is the session's 32-byte instance id
        /// (fresh per run). Bad parameters are `invalidInput(.invalidParameters)`.
        public init(party: PartyIndex, threshold: UInt8, parties: UInt8, sessionId: [UInt8], mode: KeygenMode,
                    using rng: inout some RandomNumberGenerator) throws(ProtocolError) {
            guard threshold >= 2, threshold <= parties, party < parties, sessionId.count == 32 else {
                throw .invalidInput(.invalidParameters)
            }
            var op: UInt8 = 1
            var modeData: [UInt8] = []
            var constant: Scalar = .zero
            switch mode {
            case .keygen:
                constant = Scalar.random(using: &rng)
            case .refresh(let share):
                guard share.party == party, share.threshold == threshold, share.parties == parties else {
                    throw .invalidInput(.invalidKeyshare)
                }
                op = 2
                modeData = share.keyId + share.generation
            case .importKey(let key):
                guard key.importer < parties, (key.importer == party) == (key.secret != nil) else {
                    throw .invalidInput(.invalidParameters)
                }
                op = 3
                modeData = key.publicKey.bytes + key.chainCode + [key.importer]
                constant = key.secret ?? .zero
            }
            self.party = party
            self.threshold = threshold
            self.parties = parties
            self.mode = mode
            self.context = FROST.domain.hash("dkg/ctx", [op], sessionId, [parties], [threshold], modeData)
            var coefficients = [constant]
            for _ in 1..<threshold { coefficients.append(Scalar.random(using: &rng)) }
            self.coefficients = coefficients
            let identifier = Identifier(party: party)
            var w = ByteWriter(capacity: 32 * Int(threshold) + 96)
            if case .keygen = mode {
                let cc = FROST.randomBytes(32, using: &rng)
                chainCodeContribution = cc
                for c in DKG.commitments(coefficients) { w.append(c) }
                let proof = DKG.proofOfKnowledge(identifier: identifier, secret: constant,
                                                 nonce: Scalar.random(using: &rng), context: context)
                w.append(proof.r)
                w.append(proof.mu)
                w.append(FROST.domain.hash("dkg/cc-commit", context, [party], cc))
            } else {
                chainCodeContribution = []
                for c in DKG.commitments(Array(coefficients.dropFirst())) { w.append(c) }
            }
            round1Message = w.bytes
            let own = try Self.decodeRound1(w.bytes, from: party, threshold: threshold, mode: mode, context: context)
            round1[party] = own
            round1Raw[party] = w.bytes
        }

        /// Round-1 payload size.
        public static func round1Size(threshold t: Int, keygen: Bool) -> Int { keygen ? 32 * t + 96 : 32 * (t - 1) }
        /// Round-2 payload size.
        public static func round2Size(keygen: Bool) -> Int { keygen ? 96 : 64 }

        static func decodeRound1(_ bytes: [UInt8], from sender: PartyIndex, threshold: UInt8, mode: KeygenMode,
                                 context: [UInt8]) throws(ProtocolError) -> Round1 {
            let keygen: Bool
            if case .keygen = mode { keygen = true } else { keygen = false }
            guard bytes.count == round1Size(threshold: Int(threshold), keygen: keygen) else {
                throw .abort(party: sender, reason: .malformedMessage)
            }
            var r = ByteReader(bytes, from: sender)
            var commitments: [Point] = []
            var ccCommitment: [UInt8] = []
            if keygen {
                for _ in 0..<threshold { commitments.append(try r.readEd25519Point()) }
                let nonceCommitment = try r.readEd25519Point()
                let mu = try r.readEd25519Scalar()
                ccCommitment = try r.read(32)
                guard DKG.verifyProofOfKnowledge(r: nonceCommitment, mu: mu, identifier: Identifier(party: sender),
                                                 commitment: commitments[0], context: context) else {
                    throw .abort(party: sender, reason: .invalidProof)
                }
            } else {
                var implied = Point.identity
                if case .importKey(let key) = mode, key.importer == sender { implied = key.publicKey }
                commitments.append(implied)
                for _ in 1..<threshold { commitments.append(try r.readEd25519Point()) }
            }
            try r.finish()
            return Round1(commitments: commitments, chainCodeCommitment: ccCommitment)
        }

        private func checkSender(_ sender: PartyIndex) throws(ProtocolError) {
            guard sender < parties, sender != party else { throw .abort(party: sender, reason: .unexpectedSender) }
        }

        /// Accepts party `sender`'s round-1 broadcast: strict length, valid non-identity points, a
        /// valid proof of knowledge (keygen). Failures are `abort(sender, …)` and change nothing.
        public mutating func receiveRound1(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            try checkSender(sender)
            guard round1[sender] == nil else { throw .abort(party: sender, reason: .duplicateMessage) }
            let decoded = try Self.decodeRound1(bytes, from: sender, threshold: threshold, mode: mode, context: context)
            round1[sender] = decoded
            round1Raw[sender] = bytes
        }

        /// Whether every round-1 message is in.
        public var hasAllRound1: Bool { round1.count == Int(parties) }
        /// Whether every round-2 message is in.
        public var hasAllRound2: Bool { round2.count == Int(parties) - 1 }

        /// H("dkg/echo"; ctx, R1_0, …, R1_{n−1}): what this party received in round 1.
        private func echo() throws(ProtocolError) -> [UInt8] {
            var fields = [context]
            for k in 0..<parties {
                guard let raw = round1Raw[k] else { throw .abort(party: nil, reason: .missingMessages) }
                fields.append(raw)
            }
            return FROST.domain.hash("dkg/echo", fields: fields)
        }

        /// The round-2 P2P messages, keyed by recipient: `echo ‖ f_i(x_j) [‖ cc_i]`. Secret:
        /// send each only to its recipient, encrypted. Needs every round-1 message.
        public func round2Messages() throws(ProtocolError) -> [PartyIndex: [UInt8]] {
            let digest = try echo()
            var out: [PartyIndex: [UInt8]] = [:]
            for k in 0..<parties where k != party {
                var w = ByteWriter(capacity: 96)
                w.append(digest)
                w.append(DKG.share(coefficients, for: Identifier(party: k)))
                if isKeygen { w.append(chainCodeContribution) }
                out[k] = w.bytes
            }
            return out
        }

        /// Accepts `sender`'s round-2 message: the echo must equal ours (`transcriptMismatch`: the
        /// sender is blamed with two parties; with more, an equivocating third party may be the cause,
        /// so nobody is), the share must pass the Feldman check (`invalidShare`), the chain-code
        /// contribution must open its commitment (`commitmentMismatch`).
        public mutating func receiveRound2(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) {
            try checkSender(sender)
            guard hasAllRound1, let sent = round1[sender] else { throw .abort(party: sender, reason: .unexpectedRound) }
            guard round2[sender] == nil else { throw .abort(party: sender, reason: .duplicateMessage) }
            guard bytes.count == Self.round2Size(keygen: isKeygen) else { throw .abort(party: sender, reason: .malformedMessage) }
            var r = ByteReader(bytes, from: sender)
            let theirEcho = try r.read(32)
            let share = try r.readEd25519Scalar()
            let cc = isKeygen ? try r.read(32) : []
            try r.finish()
            guard theirEcho == (try echo()) else {
                throw .abort(party: parties == 2 ? sender : nil, reason: .transcriptMismatch)
            }
            guard DKG.verifyShare(share, for: Identifier(party: party), commitments: sent.commitments) else {
                throw .abort(party: sender, reason: .invalidShare)
            }
            if isKeygen, FROST.domain.hash("dkg/cc-commit", context, [sender], cc) != sent.chainCodeCommitment {
                throw .abort(party: sender, reason: .commitmentMismatch)
            }
            round2[sender] = Round2(share: share, chainCode: cc)
        }

        /// The new keyshare, once every round-2 message is in.
        public func finish() throws(ProtocolError) -> Keyshare {
            guard hasAllRound1, hasAllRound2 else { throw .abort(party: nil, reason: .missingMessages) }
            let me = Identifier(party: party)
            var secret = DKG.share(coefficients, for: me)
            for (_, message) in round2 { secret += message.share }
            // Group commitment Φ_m = Σ_j φ_{j,m}.
            var group = [Point](repeating: .identity, count: Int(threshold))
            for k in 0..<parties {
                guard let message = round1[k] else { throw .abort(party: nil, reason: .missingMessages) }
                for m in 0..<Int(threshold) { group[m] += message.commitments[m] }
            }
            var verifying = (0..<parties).map { FROST.evaluate(commitments: group, at: Identifier(party: $0).scalar) }
            var publicKey = group[0]
            var chainCode: [UInt8]
            switch mode {
            case .keygen:
                var all: [UInt8] = []
                for k in 0..<parties { all += k == party ? chainCodeContribution : (round2[k]?.chainCode ?? []) }
                chainCode = FROST.domain.hash("dkg/chaincode", context, all)
            case .refresh(let old):
                secret += old.secretShare
                for k in 0..<Int(parties) { verifying[k] += old.verifyingShares[k] }
                publicKey = old.publicKey
                chainCode = old.chainCode
            case .importKey(let key):
                chainCode = key.chainCode
                guard publicKey == key.publicKey else { throw .abort(party: key.importer, reason: .publicKeyMismatch) }
            }
            guard !publicKey.isIdentity, !verifying.contains(where: \.isIdentity), !secret.isZero else {
                throw .abort(party: nil, reason: .identityPoint)
            }
            guard Point(base: secret) == verifying[Int(party)] else { throw .abort(party: nil, reason: .invalidShare) }
            var shareBytes: [UInt8] = []
            for y in verifying { shareBytes += y.bytes }
            let generation = FROST.domain.hash("dkg/transcript", context, try echo(), publicKey.bytes, chainCode, shareBytes)
            do {
                return try Keyshare(party: party, threshold: threshold, parties: parties, publicKey: publicKey,
                                    generation: generation, chainCode: chainCode, secretShare: secret,
                                    verifyingShares: verifying)
            } catch {
                throw .abort(party: nil, reason: .invalidShare)
            }
        }

        public var description: String { "FROST.KeyGeneration(party: \(party), \(threshold)-of-\(parties), secrets redacted)" }
    }
}
