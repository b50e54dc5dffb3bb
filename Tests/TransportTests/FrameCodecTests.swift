import Foundation
import Testing
@testable import SilentShardCore

/// A server frame (unmasked) as the peer would put it on the wire.
func serverFrame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0) -> [UInt8] {
    var out: [UInt8] = [(fin ? 0x80 : 0) | rsv | opcode]
    if payload.count < 126 {
        out.append(UInt8(payload.count))
    } else if payload.count <= 0xFFFF {
        out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    } else {
        out.append(127)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    return out + payload
}

/// Decodes every event in `bytes`, or the first error.
func decodeAll(_ bytes: [UInt8], limit: Int = 1 << 20, chunk: Int = .max) throws(WebSocketProtocolError) -> [WebSocketMessageAssembler.Event] {
    var decoder = WebSocketFrameDecoder(maximumPayload: limit)
    var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
    var events: [WebSocketMessageAssembler.Event] = []
    var offset = 0
    repeat {
        let end = min(bytes.count, offset + chunk)
        decoder.append(Array(bytes[offset..<end]))
        offset = end
        while let frame = try decoder.nextFrame() {
            if let event = try assembler.consume(frame) { events.append(event) }
        }
    } while offset < bytes.count
    return events
}

@Suite("RFC 6455 frame codec", .timeLimit(.minutes(30)))
struct FrameCodecTests {
    @Test func encodesMaskedFramesThatUnmaskBack() {
        for length in [0, 1, 125, 126, 65535, 65536, 200_000] {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let frame = payload.withUnsafeBytes {
                WebSocketFrameEncoder.frame(opcode: .binary, fin: true, payload: $0, maskKey: 0x0102_0304)
            }
            #expect(frame[0] == 0x82)
            #expect(frame[1] & 0x80 == 0x80)
            let header = length < 126 ? 2 : (length <= 0xFFFF ? 4 : 10)
            #expect(Array(frame[header..<(header + 4)]) == [1, 2, 3, 4])
            var body = Array(frame[(header + 4)...])
            body.withUnsafeMutableBytes { WebSocketMasking.apply(key: 0x0102_0304, to: $0) }
            #expect(body == payload)
        }
    }

    @Test func rfcMaskedHelloExample() {
        // RFC 6455 §5.7: a single-frame masked text message "Hello".
        let frame = Array("Hello".utf8).withUnsafeBytes {
            WebSocketFrameEncoder.frame(opcode: .text, fin: true, payload: $0, maskKey: 0x37FA_213D)
        }
        #expect(frame == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test func fragmentsLargeMessages() {
        let payload = [UInt8](repeating: 7, count: 2500)
        let frames = payload.withUnsafeBytes {
            WebSocketFrameEncoder.message(opcode: .text, payload: $0, fragmentSize: 1000) { 0 }
        }
        #expect(frames.map { $0[0] } == [0x01, 0x00, 0x80])
        let empty = [UInt8]().withUnsafeBytes {
            WebSocketFrameEncoder.message(opcode: .binary, payload: $0, fragmentSize: 1000) { 0 }
        }
        #expect(empty == [[0x82, 0x80, 0, 0, 0, 0]])
    }

    @Test func decodesUnmaskedServerFramesInAnyChunking() throws {
        let bytes = serverFrame(0x1, Array("Hel".utf8), fin: false) + serverFrame(0x9, [1, 2])
            + serverFrame(0x0, Array("lo".utf8)) + serverFrame(0x2, [UInt8](repeating: 9, count: 70_000))
            + serverFrame(0x8, [0x03, 0xE8] + Array("bye".utf8))
        let expected: [WebSocketMessageAssembler.Event] = [
            .ping([1, 2]), .message(.text("Hello")), .message(.binary(Data(repeating: 9, count: 70_000))),
            .close(code: 1000, reason: "bye"),
        ]
        for chunk in [1, 2, 3, 7, 1000, .max] {
            #expect(try decodeAll(bytes, chunk: chunk) == expected)
        }
    }

    @Test func rejectsWhatAClientMustReject() {
        let cases: [([UInt8], WebSocketProtocolError)] = [
            ([0x82, 0x81, 0, 0, 0, 0, 0], .protocolError),             // masked server frame
            (serverFrame(0x2, [1], rsv: 0x40), .protocolError),         // RSV1 without extension
            (serverFrame(0x3, []), .protocolError),                     // reserved opcode
            (serverFrame(0xB, []), .protocolError),                     // reserved control opcode
            (serverFrame(0x9, [], fin: false), .protocolError),         // fragmented ping
            ([0x89, 126, 0, 126] + [UInt8](repeating: 0, count: 126), .protocolError),  // long ping
            (serverFrame(0x0, [1]), .protocolError),                    // continuation first
            (serverFrame(0x1, [1], fin: false) + serverFrame(0x2, [1]), .protocolError),  // new message mid-way
            ([0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0], .protocolError),  // 64-bit length, top bit
            (serverFrame(0x1, [0xC0, 0x80]), .invalidUTF8),             // overlong
            (serverFrame(0x1, [0xED, 0xA0, 0x80]), .invalidUTF8),       // surrogate
            (serverFrame(0x1, [0xCE], fin: false) + serverFrame(0x0, [0xBA, 0xFF]), .invalidUTF8),
            (serverFrame(0x8, [0x03]), .protocolError),                 // 1-byte close payload
            (serverFrame(0x8, [0x03, 0xED]), .protocolError),           // 1005 on the wire
            (serverFrame(0x8, [0x03, 0xE8, 0xFF]), .invalidUTF8),       // bad reason
            (serverFrame(0x2, [UInt8](repeating: 0, count: 101)), .messageTooLarge),
            (serverFrame(0x2, [UInt8](repeating: 0, count: 60), fin: false) + serverFrame(0x0, [UInt8](repeating: 0, count: 60)), .messageTooLarge),
            ([0x82, 127, 0, 0, 0, 1, 0, 0, 0, 0], .messageTooLarge),   // rejected from the header alone
        ]
        for (bytes, error) in cases {
            #expect(throws: error) { try decodeAll(bytes, limit: 100) }
        }
    }

    @Test func closeCodes() throws {
        #expect(try decodeAll(serverFrame(0x8, [])) == [.close(code: nil, reason: "")])
        #expect(try decodeAll(serverFrame(0x8, [0x0F, 0xA1])) == [.close(code: 4001, reason: "")])
        for code: UInt16 in [999, 1004, 1005, 1006, 1015, 2999, 5000] {
            #expect(!WebSocketMessageAssembler.isValidReceivedCloseCode(code))
        }
    }
}
