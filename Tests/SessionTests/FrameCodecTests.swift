import MPCCrypto
import MPCProtocols
import Testing
@testable import SilentShardCore

@Suite("Session frames: header, kinds, bundles, tags")
struct FrameCodecTests {
    let id = InstanceID.random()

    func header(_ kind: FrameKind = .broadcast, sender: PartyIndex = 0, receiver: PartyIndex = 0xFF,
                tag: UInt16 = 0x0101, seq: UInt32 = 3, length: UInt32 = 5) -> FrameHeader {
        FrameHeader(kind: kind, sender: sender, receiver: receiver, tag: tag, seq: seq, length: length, instanceID: id)
    }

    func code(_ bytes: [UInt8]) -> WireCode? {
        do { _ = try FrameHeader.decode(bytes); return nil } catch { return error.code }
    }

    @Test func headerRoundTripAndLayout() throws {
        let h = header()
        let bytes = h.encoded()
        #expect(bytes.count == 48)
        #expect(Array(bytes[0..<16]) == [1, 0x10, 0, 0xFF, 0x01, 0x01, 0, 0, 0, 0, 0, 3, 0, 0, 0, 5])
        #expect(Array(bytes[16...]) == id.bytes)
        #expect(try FrameHeader.decode(bytes) == h)
    }

    @Test func headerRejections() {
        let good = header().encoded()
        #expect(code(Array(good.prefix(47))) == .malformed)
        var b = good; b[0] = 2
        #expect(code(b) == .unsupportedVersion)
        b = good; b[1] = 0x7F
        #expect(code(b) == .malformed)
        b = good; b[7] = 1
        #expect(code(b) == .malformed)
        // sender/receiver not in the kinds table
        #expect(code(header(.broadcast, sender: 3).encoded()) == .malformed)
        #expect(code(header(.broadcast, receiver: 1).encoded()) == .malformed)
        #expect(code(header(.accept, sender: 0, tag: 0).encoded()) == .malformed)
        #expect(code(header(.pointToPoint, sender: 1, receiver: 1, tag: 0x0102).encoded()) == .malformed)
        #expect(code(header(.ready, sender: 0, receiver: 1, tag: 0).encoded()) == .malformed)
        #expect(code(header(.commit, sender: 1, tag: 0).encoded()) == .malformed)
        #expect(code(header(.exportResponse, sender: 2, receiver: 0, tag: 0, seq: 0).encoded()) == .malformed)
        // non-protocol kind with a tag; unsequenced kind with a seq
        #expect(code(header(.commit, tag: 0x0101).encoded()) == .malformed)
        #expect(code(header(.reject, sender: 1, receiver: 0, tag: 0, seq: 1).encoded()) == .malformed)
        // len over the kind's maximum
        #expect(code(header(.commit, tag: 0, length: 257).encoded()) == .tooLarge)
        #expect(code(header(.commit, tag: 0, length: 256).encoded()) == nil)
        #expect(code(header(.pointToPoint, receiver: 1, tag: 0x0102, length: 131_073).encoded()) == .tooLarge)
    }

    @Test func kindsTable() {
        #expect(FrameKind.allCases.count == 18)
        // PRESIG_QUERY / PRESIG_STATUS (session.md §8.6): app → node and back, unsequenced, no tag.
        #expect(FrameKind.presigQuery.allows(sender: 0, receiver: 2) && !FrameKind.presigQuery.allows(sender: 1, receiver: 0))
        #expect(FrameKind.presigStatus.allows(sender: 1, receiver: 0) && !FrameKind.presigStatus.allows(sender: 0, receiver: 1))
        #expect(!FrameKind.presigQuery.isSequenced && !FrameKind.presigStatus.isSequenced)
        #expect(FrameKind.presigQuery.authenticator == .bearerToken && FrameKind.presigStatus.authenticator == .nodeKey(.status))
        #expect(FrameKind.setup.allows(sender: 0, receiver: 0xFF))
        #expect(FrameKind.setup.allows(sender: 0, receiver: 1))
        #expect(!FrameKind.setup.allows(sender: 1, receiver: 0xFF))
        #expect(FrameKind.ready.allows(sender: 1, receiver: 2) && FrameKind.ready.allows(sender: 2, receiver: 1))
        #expect(!FrameKind.ready.allows(sender: 1, receiver: 0xFF))
        #expect(FrameKind.finalRequest.allows(sender: 0, receiver: 2))
        #expect(FrameKind.stored.allows(sender: 2, receiver: 0) && !FrameKind.stored.allows(sender: 0, receiver: 1))
        #expect(!FrameKind.reject.isSequenced && FrameKind.pointToPoint.isSequenced)
        #expect(FrameKind.finalRequest.maximumPayloadByteCount == 40_960)
    }

    @Test func tagRegistry() {
        #expect(ProtocolTagRegistry.delivery(of: 0x0102, algorithm: .ecdsa) == .pointToPoint)
        #expect(ProtocolTagRegistry.delivery(of: 0x0102, algorithm: .eddsa) == nil)
        #expect(ProtocolTagRegistry.delivery(of: 0x0202, algorithm: .eddsa) == .pointToPoint)
        #expect(ProtocolTagRegistry.delivery(of: 0x4102, algorithm: .ecdsa) == nil)
        #expect(ProtocolTagRegistry.isConsistent(kind: .broadcast, tag: 0x1301, algorithm: .eddsa))
        #expect(!ProtocolTagRegistry.isConsistent(kind: .pointToPoint, tag: 0x0101, algorithm: .ecdsa))
        #expect(!ProtocolTagRegistry.isConsistent(kind: .broadcast, tag: 0x9999, algorithm: .ecdsa))
        #expect(ProtocolTagRegistry.isConsistent(kind: .finalRequest, tag: 0x1301, algorithm: .ecdsa))
        #expect(!ProtocolTagRegistry.isConsistent(kind: .finalRequest, tag: 0x1101, algorithm: .eddsa))
        #expect(ProtocolTagRegistry.isConsistent(kind: .commit, tag: 0, algorithm: .ecdsa))
    }

    @Test func signedFrameAndBundleRoundTrip() throws {
        let key = Ed25519.SigningKey()
        let f1 = Frame.signed(header: header(length: 3), payload: [1, 2, 3], key: key)
        let p2p = Frame(header: header(.pointToPoint, receiver: 1, tag: 0x0102, length: 2), sealed: [UInt8](repeating: 9, count: 18))
        let fin = Frame(header: header(.finalRequest, receiver: 2, tag: 0x1301, seq: 0, length: 1),
                        nonce: [UInt8](repeating: 4, count: 24), sealed: [UInt8](repeating: 5, count: 17))
        let bytes = Frame.bundle([f1, p2p, fin])
        #expect(bytes.count == 48 + 3 + 64 + 48 + 18 + 48 + 24 + 17)
        let parsed = try Frame.parseBundle(bytes)
        #expect(parsed == [f1, p2p, fin])
        #expect(parsed[0].hasValidSignature(by: key.verifyingKey))
        #expect(!parsed[0].hasValidSignature(by: Ed25519.SigningKey().verifyingKey))
        #expect(try Frame.parseSingle(f1.encoded()) == f1)
    }

    @Test func bundleRejections() throws {
        let key = Ed25519.SigningKey()
        let frame = Frame.signed(header: header(length: 3), payload: [1, 2, 3], key: key).encoded()
        func code(_ bytes: [UInt8]) -> WireCode? {
            do { _ = try Frame.parseBundle(bytes); return nil } catch { return error.code }
        }
        #expect(code([]) == .malformed)
        #expect(code(Array(frame.dropLast())) == .malformed)          // truncated authenticator
        #expect(code(frame + [0]) == .malformed)                      // trailing garbage
        #expect(code(Array(repeating: frame, count: 64).flatMap { $0 }) == nil)
        #expect(code(Array(repeating: frame, count: 65).flatMap { $0 }) == .tooLarge)
        #expect(code([UInt8](repeating: 0, count: (1 << 20) + 1)) == .tooLarge)
        #expect(throws: SessionError.self) { try Frame.parseSingle(frame + frame) }
        // Fuzz-ish: no input crashes the parser.
        var rng = DeterministicRandom(seed: 7)
        for _ in 0..<2000 {
            var mutated = frame
            let i = Int(rng.next() % UInt64(mutated.count))
            mutated[i] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
            _ = try? Frame.parseBundle(Array(mutated.prefix(Int(rng.next() % UInt64(mutated.count + 1)))))
        }
    }
}
