import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

@Suite("DKLs23 signing", .heavy)
struct DKLsSignTests {
    static let trio = Result { try DKLsHarness.keygen(n: 3, t: 2, seed: 300) }
    static let duo = Result { try DKLsHarness.keygen(n: 2, t: 2, seed: 200) }

    static func hash(_ text: String) -> [UInt8] { SHA256.hash(Array(text.utf8)) }

    static func checkSignature(_ signature: Secp256k1.ECDSASignature, hash: [UInt8], key: Secp256k1.Point) throws {
        #expect(signature.isLowS)
        #expect(Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: key))
        #expect(try Secp256k1.ECDSA.recoverPublicKey(signature, hash: hash) == key)
    }

    @Test func duoSignsAndMessageSizesMatchTheSpec() throws {
        let keyshares = try Self.duo.get()
        let hash = Self.hash("duo")
        let (signature, run) = try DKLsHarness.sign(keyshares, signers: [0, 1], hash: hash, seed: 1)
        try Self.checkSignature(signature, hash: hash, key: keyshares[0].publicKey)
        #expect(run.bytesSent[0] == 58_932 && run.bytesSent[1] == 58_932)   // dkls23.md §13.8
    }

    @Test(arguments: [[0, 1], [0, 2], [1, 2], [0, 1, 2]] as [[PartyIndex]])
    func trioSignsWithEverySignerSet(signers: [PartyIndex]) throws {
        let keyshares = try Self.trio.get()
        let hash = Self.hash("trio \(signers)")
        let (signature, _) = try DKLsHarness.sign(keyshares, signers: signers, hash: hash, seed: UInt64(signers.count * 10 + Int(signers[0])))
        try Self.checkSignature(signature, hash: hash, key: keyshares[0].publicKey)
    }

    @Test func threeOfFiveSigns() throws {
        let keyshares = try DKLsHarness.keygen(n: 5, t: 3, seed: 500)
        for (index, signers) in ([[0, 1, 2], [1, 3, 4]] as [[PartyIndex]]).enumerated() {
            let hash = Self.hash("3-of-5 \(index)")
            let (signature, _) = try DKLsHarness.sign(keyshares, signers: signers, hash: hash, seed: UInt64(50 + index))
            try Self.checkSignature(signature, hash: hash, key: keyshares[0].publicKey)
        }
    }

    @Test func softDerivedSigning() throws {
        let keyshares = try Self.trio.get()
        let path = try DerivationPath("m/44/60/0/0/7")
        let derived = try path.derive(publicKey: keyshares[0].publicKey, chainCode: keyshares[0].rootChainCode)
        #expect(derived.publicKey == keyshares[0].publicKey + Secp256k1.Point(base: derived.tweak))
        let hash = Self.hash("derived")
        let (signature, _) = try DKLsHarness.sign(keyshares, signers: [0, 2], hash: hash, path: path, seed: 7)
        try Self.checkSignature(signature, hash: hash, key: derived.publicKey)
        #expect(!Secp256k1.ECDSA.verify(signature, hash: hash, publicKey: keyshares[0].publicKey))
    }

    @Test func derivationPathParsing() throws {
        #expect(try DerivationPath("m").indices == [])
        #expect(try DerivationPath("m/0/2147483647").indices == [0, 2_147_483_647])
        #expect(try DerivationPath("m/44'/60h/1", allowHardened: true).indices == [0x8000_002C, 0x8000_003C, 1])
        #expect(try DerivationPath("m/44'/60'/0'/0/5", allowHardened: true).bytes == hex("058000002c8000003c800000000000000000000005"))
        for bad in ["", "m/", "x/1", "m/01", "m/2147483648", "m/1'", "m/-1", "m/1/", "m//1", "m/1a", "m/٣"] {
            #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) { try DerivationPath(bad) }
        }
    }

    @Test func presignThenFinishAndSingleUse() throws {
        let keyshares = try Self.trio.get()
        var run = try DKLsHarness.presign(keyshares, signers: [1, 2], seed: 12)
        let hash = Self.hash("later")
        var finishes: [ProtocolMessage] = [], states: [DKLsSign.FinishState] = []
        for (position, presignature) in run.presignatures.enumerated() {
            let (state, message) = try presignature.finish(messageHash: hash, keyshare: keyshares[position + 1])
            #expect(message.payload.count == 128)
            states.append(state)
            finishes.append(message)
            #expect(presignature.isConsumed)
        }
        let signature = try states[0].combine(DKLsHarness.inbox(of: 1, finishes))
        #expect(try states[1].combine(DKLsHarness.inbox(of: 2, finishes)) == signature)
        try Self.checkSignature(signature, hash: hash, key: keyshares[0].publicKey)
        // A second finish (with any message) is refused.
        #expect(throws: ProtocolError.invalidInput(.presignatureAlreadyUsed)) {
            try run.presignatures[0].finish(messageHash: Self.hash("again"), keyshare: keyshares[1])
        }
        // A presignature of one key is refused for another key; a wrong-length message too.
        run = try DKLsHarness.presign(keyshares, signers: [0, 1], seed: 13)
        let otherKey = try Self.duo.get()
        #expect(throws: ProtocolError.invalidInput(.presignatureMismatch)) {
            try run.presignatures[0].finish(messageHash: hash, keyshare: otherKey[0])
        }
        #expect(throws: ProtocolError.invalidInput(.invalidMessageHash)) {
            try run.presignatures[0].finish(messageHash: [1, 2, 3], keyshare: keyshares[0])
        }
        #expect(!run.presignatures[0].isConsumed)
    }

    @Test func finishMismatchIsFailNotBan() throws {
        let keyshares = try Self.duo.get()
        let run = try DKLsHarness.presign(keyshares, signers: [0, 1], seed: 14)
        let (state0, message0) = try run.presignatures[0].finish(messageHash: Self.hash("a"), keyshare: keyshares[0])
        let (_, message1) = try run.presignatures[1].finish(messageHash: Self.hash("b"), keyshare: keyshares[1])
        #expect(throws: ProtocolError.signingFailed(party: 1, reason: .messageMismatch)) { try state0.combine([message1]) }
        _ = message0
    }

    @Test func parametersAreValidated() throws {
        let keyshares = try Self.trio.get()
        let id = [UInt8](repeating: 1, count: 32)
        for signers in [[0], [1, 2], [0, 0, 1], [0, 3]] as [[PartyIndex]] {
            #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
                try DKLsSign.Parameters(keyshare: keyshares[0], signers: signers, instanceId: id, setupHash: id)
            }
        }
    }
}

@Suite("DKLs23 signing: tampering", .heavy)
struct DKLsSignTamperTests {
    typealias Reason = ProtocolError.Reason

    /// (round, from, to (nil: broadcast), byte offset, expected error)
    static let cases: [(String, Int, PartyIndex, PartyIndex?, Int, ProtocolError)] = [
        ("R1 broadcast: ctx", 1, 1, nil, 0, .abort(party: 1, reason: .sessionMismatch)),
        ("R1 broadcast: nonce", 1, 1, nil, 40, .abortAndBan(party: 1, reason: .otConsistencyCheckFailed)),
        ("R1 OT extension: û", 1, 1, 0, 1000, .abortAndBan(party: 1, reason: .otConsistencyCheckFailed)),
        ("R1 OT extension: x̃", 1, 1, 0, 5_128, .abortAndBan(party: 1, reason: .otConsistencyCheckFailed)),
        ("R1 OT extension: t̃ (row 100)", 1, 1, 0, 6_744, .abortAndBan(party: 1, reason: .otConsistencyCheckFailed)),
        ("R2: fsid", 2, 1, 0, 5, .abort(party: 1, reason: .transcriptMismatch)),
        ("R2: R_j (parity: a valid point)", 2, 1, 0, 32, .abort(party: 1, reason: .commitmentMismatch)),
        ("R2: salt", 2, 1, 0, 70, .abort(party: 1, reason: .commitmentMismatch)),
        ("R2: pk_j (parity: a valid point)", 2, 1, 0, 97, .abortAndBan(party: 1, reason: .keyConsistencyCheckFailed)),
        ("R2: Γu (parity)", 2, 1, 0, 130, .abortAndBan(party: 1, reason: .nonceConsistencyCheckFailed)),
        ("R2: Γv (parity)", 2, 1, 0, 163,
         .abortAndBan(party: 1, reason: .keyConsistencyCheckFailed)),
        ("R2: ã", 2, 1, 0, 300, .abortAndBan(party: 1, reason: .multiplicationCheckFailed)),
        ("R2: η", 2, 1, 0, 229 + 49_160, .abortAndBan(party: 1, reason: .multiplicationCheckFailed)),
        ("R2: μ", 2, 1, 0, 229 + 49_200, .abortAndBan(party: 1, reason: .multiplicationCheckFailed)),
        ("finish: fsid", 3, 1, nil, 3, .abort(party: 1, reason: .transcriptMismatch)),
        ("finish: m", 3, 1, nil, 40, .signingFailed(party: 1, reason: .messageMismatch)),
        ("finish: w", 3, 1, nil, 80, .signingFailed(party: nil, reason: .invalidSignature)),
        ("finish: u", 3, 1, nil, 120, .signingFailed(party: nil, reason: .invalidSignature)),
    ]

    @Test(arguments: 0..<cases.count)
    func flippedBitIsDetected(caseIndex: Int) throws {
        let (name, round, from, to, offset, expected) = Self.cases[caseIndex]
        let keyshares = try DKLsSignTests.duo.get()
        let result = Result { () throws in
            try DKLsHarness.sign(keyshares, signers: [0, 1], hash: DKLsSignTests.hash(name), seed: UInt64(100 + caseIndex)) { r, messages in
                guard r == round else { return messages }
                return DKLsHarness.flip(messages, at: offset) { $0.from == from && $0.to == to && (to != nil || $0.isBroadcast) }
            }
        }
        guard case .failure(let error) = result else {
            Issue.record("\(name): tampering went unnoticed")
            return
        }
        #expect(error as? ProtocolError == expected, "\(name)")
    }

    @Test func undecodablePointIsMalformed() throws {
        let keyshares = try DKLsSignTests.duo.get()
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            _ = try DKLsHarness.sign(keyshares, signers: [0, 1], hash: DKLsSignTests.hash("point"), seed: 142) { r, messages in
                guard r == 2 else { return messages }
                return messages.map { m in
                    guard m.from == 1 else { return m }
                    var payload = m.payload
                    payload[163] = 0x04   // Γv's prefix: not a compressed encoding
                    return ProtocolMessage(tag: m.tag, from: m.from, to: m.to, payload: payload)
                }
            }
        }
    }

    @Test func psiTamperingYieldsNoSignature() throws {
        // ψ is not checked on its own; a wrong ψ makes the combined signature invalid (Fail, no output).
        let keyshares = try DKLsSignTests.duo.get()
        #expect(throws: ProtocolError.signingFailed(party: nil, reason: .invalidSignature)) {
            _ = try DKLsHarness.sign(keyshares, signers: [0, 1], hash: DKLsSignTests.hash("psi"), seed: 140) { r, messages in
                r == 2 ? DKLsHarness.flip(messages, at: 200) { $0.from == 1 } : messages
            }
        }
    }

    @Test func staleKeyshareIsContextMismatchNotBan() throws {
        // A party signing with a keyshare of another generation fails the context check first.
        let keyshares = try DKLsSignTests.trio.get()
        let other = try DKLsHarness.keygen(n: 3, t: 2, seed: 301)
        #expect(throws: ProtocolError.abort(party: 1, reason: .sessionMismatch)) {
            _ = try DKLsHarness.sign([keyshares[0], other[1], keyshares[2]], signers: [0, 1], hash: DKLsSignTests.hash("stale"), seed: 141)
        }
    }
}
