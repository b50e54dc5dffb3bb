// libFuzzer harness for the transport's pure decoders: the RFC 6455 frame decoder + message
// assembler, the HTTP response-head parser and the chunked-body decoder. Built by scripts/fuzz with
// `swiftc -sanitize=fuzzer,address` together with the decoder sources (no package, no I/O).
//
// Checks beyond "no crash": decoding the same bytes in one piece and in small pieces gives the same
// events and the same error; no message exceeds the limit.

private let limit = 4096

private func decode(_ bytes: [UInt8], chunk: Int) -> ([WebSocketMessageAssembler.Event], WebSocketProtocolError?) {
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
                precondition(frame.payload.count <= limit)
                if let event = try assembler.consume(frame) { events.append(event) }
            }
        } catch {
            return (events, error)
        }
    } while offset < bytes.count
    return (events, nil)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    switch selector % 4 {
    case 0, 1:
        let whole = decode(bytes, chunk: .max)
        let pieces = decode(bytes, chunk: Int(selector >> 2) % 7 + 1)
        precondition(whole.0 == pieces.0 && whole.1 == pieces.1, "chunking changed the result")
        for case .message(let message) in whole.0 { precondition(message.data.count <= limit) }
    case 2:
        if let parsed = try? HTTPResponseHead.parse(bytes) {
            precondition(parsed.length <= bytes.count && (100...599).contains(parsed.head.status))
        }
    default:
        if let body = try? HTTPChunkedBody.decode(bytes[...], limit: limit) {
            precondition(body.count <= limit)
        }
    }
    return 0
}
