import SilentShardCore

/// The transport's pure decoders: the RFC 6455 frame decoder + message assembler, the HTTP
/// response-head parser and the chunked-body decoder. Selector byte: 0, 1 frames (whole and in small
/// pieces must agree), 2 HTTP head, 3 chunked body.
enum TransportTargets {
    static let limit = 4096

    static let transport = FuzzTarget(
        name: "transport", summary: "WebSocket frames/messages, HTTP response head, chunked body",
        seeds: {
            [
                [0x00, 0x81, 0x05] + Array("Hello".utf8),
                [0x04, 0x01, 0x02] + Array("Hi".utf8) + [0x89, 0x00, 0x80, 0x01] + Array("!".utf8),
                [0x00, 0x88, 0x05, 0x03, 0xE8] + Array("bye".utf8),
                [0x02] + Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".utf8),
                [0x03] + Array("4\r\nWiki\r\n0\r\n\r\n".utf8),
            ]
        },
        run: { input in
            guard let (selector, bytes) = split(input) else { return }
            switch selector % 4 {
            case 0, 1:
                let whole = decode(bytes, chunk: .max)
                if whole.1 == nil { accepted() }
                let pieces = decode(bytes, chunk: Int(selector >> 2) % 7 + 1)
                expect(whole.0 == pieces.0 && whole.1 == pieces.1, "chunking changed the result")
                for case .message(let message) in whole.0 { expect(message.data.count <= limit, "message over the limit") }
            case 2:
                if let parsed = try? HTTPResponseHead.parse(bytes) {
                    accepted()
                    expect(parsed.length <= bytes.count && (100...599).contains(parsed.head.status), "head out of bounds")
                }
            default:
                if let body = try? HTTPChunkedBody.decode(bytes[...], limit: limit) {
                    accepted()
                    expect(body.count <= limit, "body over the limit")
                }
            }
        })

    private static func decode(_ bytes: [UInt8], chunk: Int) -> ([WebSocketMessageAssembler.Event], WebSocketProtocolError?) {
        var decoder = WebSocketFrameDecoder(maximumPayload: limit)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit)
        var events: [WebSocketMessageAssembler.Event] = []
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + chunk)
            decoder.append(Array(bytes[offset..<end]))
            offset = end
            do {
                while let frame = try decoder.nextFrame() {
                    expect(frame.payload.count <= limit, "frame over the limit")
                    if let event = try assembler.consume(frame) { events.append(event) }
                }
            } catch {
                return (events, error)
            }
        } while offset < bytes.count
        return (events, nil)
    }
}
