import MPCCrypto
import SilentShardTestTraits
import Testing
@_spi(InProcess) @testable import MPCProtocols

@Suite("DKLs23 export", .heavy)
struct DKLsExportTests {
    static let trio = Result { try DKLsHarness.keygen(n: 3, t: 2, seed: 3_300) }
    static let duo = Result { try DKLsHarness.keygen(n: 2, t: 2, seed: 3_200) }

    static func export(_ keyshares: [DKLsKeyshare], receiver: PartyIndex, exporters: [PartyIndex], receiverInSet: Bool,
                       seed: UInt64, tamper: @escaping DKLsInProcess.Tamper = { $1 },
                       observe: @escaping DKLsInProcess.Observe = { _ in }) throws -> DKLsExportedKey {
        var rng = DeterministicRandom(seed: seed)
        return try DKLsInProcess.export(receiver: keyshares[Int(receiver)], exporters: exporters.map { keyshares[Int($0)] },
                                        receiverInSet: receiverInSet, using: &rng, tamper: tamper, observe: observe)
    }

    @Test func duoExportReturnsTheKeyAndMessagesAre80Bytes() throws {
        let keyshares = try Self.duo.get()
        var sizes: [Int] = []
        let key = try Self.export(keyshares, receiver: 0, exporters: [1], receiverInSet: true, seed: 1,
                                  observe: { sizes.append($0.payload.count) })
        #expect(sizes == [80])
        #expect(key.publicKey == keyshares[0].publicKey && key.chainCode == keyshares[0].rootChainCode)
        #expect(key.privateKey == (try DKLsHarness.reconstruct(keyshares)))
        #expect(!String(describing: key).contains(Hex.encode(key.privateKey.bytes)))
        // The cloud can receive too.
        let atCloud = try Self.export(keyshares, receiver: 1, exporters: [0], receiverInSet: true, seed: 2)
        #expect(atCloud == key)
    }

    @Test(arguments: [
        (0, [1, 2], true), (0, [1, 2], false), (0, [1], true), (2, [0], true), (1, [0, 2], true), (1, [2], true),
    ] as [(PartyIndex, [PartyIndex], Bool)])
    func trioExportAllSharesOrAnyT(receiver: PartyIndex, exporters: [PartyIndex], receiverInSet: Bool) throws {
        let keyshares = try Self.trio.get()
        var sizes: [Int] = []
        let key = try Self.export(keyshares, receiver: receiver, exporters: exporters, receiverInSet: receiverInSet,
                                  seed: UInt64(10 + receiver), observe: { sizes.append($0.payload.count) })
        #expect(sizes == Array(repeating: 80, count: exporters.count))
        #expect(key.publicKey == keyshares[0].publicKey)
        #expect(key.privateKey == (try DKLsHarness.reconstruct([keyshares[0], keyshares[1]])))
    }

    static func flip(at offset: Int, of exporter: PartyIndex) -> DKLsInProcess.Tamper {
        { _, messages in DKLsHarness.flip(messages, at: offset) { $0.from == exporter } }
    }

    @Test func tamperingIsAbortOfTheExporter() throws {
        let keyshares = try Self.trio.get()
        for offset in [0, 31, 32, 50, 63, 64, 79] {   // epk, ciphertext, tag
            #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) {
                try Self.export(keyshares, receiver: 0, exporters: [1, 2], receiverInSet: true, seed: 20,
                                tamper: Self.flip(at: offset, of: 2))
            }
        }
        let truncate: DKLsInProcess.Tamper = { _, m in
            m.map { ProtocolMessage(tag: $0.tag, from: $0.from, to: $0.to, payload: Array($0.payload.dropLast())) }
        }
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try Self.export(keyshares, receiver: 0, exporters: [1], receiverInSet: true, seed: 21, tamper: truncate)
        }
        #expect(throws: ProtocolError.abort(party: 2, reason: .missingMessages)) {
            try Self.export(keyshares, receiver: 0, exporters: [1, 2], receiverInSet: true, seed: 22,
                            tamper: { _, m in m.filter { $0.from != 2 } })
        }
        // A broadcast instead of a P2P message does not count.
        #expect(throws: ProtocolError.abort(party: 1, reason: .missingMessages)) {
            try Self.export(keyshares, receiver: 0, exporters: [1], receiverInSet: true, seed: 23,
                            tamper: { _, m in m.map { ProtocolMessage(tag: $0.tag, from: $0.from, to: nil, payload: $0.payload) } })
        }
    }

    /// Valid encryptions of a wrong share, and ones bound to another context or sender.
    @Test func wrongShareOrContextIsAbortOfTheExporter() throws {
        let keyshares = try Self.trio.get()
        var rng = DeterministicRandom(seed: 30)
        let receiverKey = try X25519.PrivateKey(rawRepresentation: rng.randomBytes(count: 32))
        let id = rng.randomBytes(count: 32)
        func parameters(_ k: PartyIndex, instance: [UInt8] = id) throws -> DKLsExport.Parameters {
            try DKLsExport.Parameters(keyshare: keyshares[Int(k)], exporters: [0, 1], receiver: 0,
                                      receiverKey: receiverKey.publicKey, instanceId: instance, setupHash: id)
        }
        func seal(_ plaintext: [UInt8], context: [UInt8], as k: PartyIndex) throws -> ProtocolMessage {
            let esk = try X25519.PrivateKey(rawRepresentation: rng.randomBytes(count: 32))
            let shared = try esk.sharedSecret(with: receiverKey.publicKey)
            let (key, aad) = DKLsExport.keyAndAAD(context: context, exporter: k, ephemeral: esk.publicKey.bytes,
                                                  receiverKey: receiverKey.publicKey.bytes, sharedSecret: shared)
            let ct = try ChaCha20Poly1305.seal(plaintext, key: key, nonce: [UInt8](repeating: 0, count: 12), associatedData: aad)
            return ProtocolMessage(tag: DKLsTag.exportShare, from: 1, to: 0, payload: esk.publicKey.bytes + ct)
        }
        let receiver = try parameters(0)
        let context = receiver.context
        let honest = try seal(keyshares[1].share.bytes, context: context, as: 1)
        let key = try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [honest])
        #expect(key.publicKey == keyshares[0].publicKey)

        let wrong = try seal((keyshares[1].share + .one).bytes, context: context, as: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidShare)) {
            try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [wrong])
        }
        let unreduced = try seal([UInt8](repeating: 0xFF, count: 32), context: context, as: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .invalidShare)) {
            try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [unreduced])
        }
        let otherContext = try seal(keyshares[1].share.bytes, context: try parameters(1, instance: [UInt8](repeating: 9, count: 32)).context, as: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [otherContext])
        }
        let otherSender = try seal(keyshares[1].share.bytes, context: context, as: 2)   // key/aad bound to u8(2)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [otherSender])
        }
        // Addressed to another party.
        let misrouted = ProtocolMessage(tag: DKLsTag.exportShare, from: 1, to: 2, payload: honest.payload)
        #expect(throws: ProtocolError.abort(party: 1, reason: .unexpectedSender)) {
            try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [misrouted])
        }
        // A small-order ephemeral key (all-zero shared secret).
        let small = ProtocolMessage(tag: DKLsTag.exportShare, from: 1, to: 0,
                                    payload: [UInt8](repeating: 0, count: 32) + Array(honest.payload[32...]))
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) {
            try DKLsExport.receive(receiver, privateKey: receiverKey, messages: [small])
        }
        // The receiver does not send; a non-member does not export; the wrong one-time key is refused.
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) { try DKLsExport.exportShare(receiver, using: &rng) }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsExport.Parameters(keyshare: keyshares[2], exporters: [0, 1], receiver: 1,
                                      receiverKey: receiverKey.publicKey, instanceId: id, setupHash: id)
        }
        let otherKey = try X25519.PrivateKey(rawRepresentation: rng.randomBytes(count: 32))
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsExport.receive(receiver, privateKey: otherKey, messages: [honest])
        }
        #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
            try DKLsExport.Parameters(keyshare: keyshares[0], exporters: [0], receiver: 0,
                                      receiverKey: receiverKey.publicKey, instanceId: id, setupHash: id)
        }
    }

    @Test func softAndHardChildExport() throws {
        let keyshares = try Self.trio.get()
        let root = try Self.export(keyshares, receiver: 0, exporters: [2], receiverInSet: true, seed: 40)
        let soft = try DerivationPath("m/44/60/0/0/3")
        let child = try root.softChild(soft)
        let derived = try soft.derive(publicKey: keyshares[0].publicKey, chainCode: keyshares[0].rootChainCode)
        #expect(child.publicKey == derived.publicKey && child.chainCode == derived.chainCode)
        #expect(throws: ProtocolError.invalidInput(.invalidDerivationPath)) {
            try root.softChild(DerivationPath("m/1'", allowHardened: true))
        }
        var rng = DeterministicRandom(seed: 41)
        let hardChildren = try DKLsInProcess.hardDerive(keyshares, path: DerivationPath("m/9'", allowHardened: true), using: &rng)
        let hard = try Self.export(hardChildren, receiver: 1, exporters: [0, 2], receiverInSet: false, seed: 42)
        #expect(hard.publicKey == hardChildren[0].publicKey && hard.chainCode == hardChildren[0].rootChainCode)
        // dkls23.md §15's caveat, demonstrated: child key − δ = parent key.
        let tweak = hardChildren[0].share - keyshares[0].share
        #expect(hard.privateKey - tweak == root.privateKey)
    }
}
