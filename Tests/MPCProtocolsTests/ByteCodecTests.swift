import MPCCrypto
import MPCProtocols
import SilentShardTestTraits
import Testing

@Suite("Strict message codec", .heavy)
struct ByteCodecTests {
    @Test func roundTrip() throws {
        var writer = ByteWriter()
        writer.append(uint8: 7)
        writer.append(uint16: 0x0102)
        writer.append(uint32: 0x0304_0506)
        writer.append(Secp256k1.Scalar(9))
        try writer.append(Secp256k1.Point.generator)
        writer.append(Ed25519.Point.generator)
        var reader = ByteReader(writer.bytes, from: 3)
        #expect(try reader.readUInt8() == 7)
        #expect(try reader.readUInt16() == 0x0102)
        #expect(try reader.readUInt32() == 0x0304_0506)
        #expect(try reader.readSecp256k1Scalar() == Secp256k1.Scalar(9))
        #expect(try reader.readSecp256k1Point() == .generator)
        #expect(try reader.readEd25519Point() == .generator)
        try reader.finish()
    }

    @Test func everyFailureBlamesTheSender() throws {
        var short = ByteReader([1, 2], from: 4)
        #expect(throws: ProtocolError.abort(party: 4, reason: .malformedMessage)) { try short.readUInt32() }
        var trailing = ByteReader([1, 2], from: 5)
        _ = try trailing.readUInt8()
        #expect(throws: ProtocolError.abort(party: 5, reason: .malformedMessage)) { try trailing.finish() }
        var badScalar = ByteReader([UInt8](repeating: 0xFF, count: 32), from: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { try badScalar.readSecp256k1Scalar() }
        var zero = ByteReader([UInt8](repeating: 0, count: 32), from: 1)
        #expect(throws: ProtocolError.abort(party: 1, reason: .malformedMessage)) { try zero.readSecp256k1Scalar(nonZero: true) }
        var badPoint = ByteReader([0x04] + [UInt8](repeating: 0, count: 32), from: 2)
        #expect(throws: ProtocolError.abort(party: 2, reason: .malformedMessage)) { try badPoint.readSecp256k1Point() }
        var identity = ByteReader(Ed25519.Point.identity.bytes, from: 0)
        #expect(throws: ProtocolError.abort(party: 0, reason: .malformedMessage)) { try identity.readEd25519Point() }
        var writer = ByteWriter()
        #expect(throws: ProtocolError.abort(party: nil, reason: .identityPoint)) { try writer.append(Secp256k1.Point.identity) }
    }
}
