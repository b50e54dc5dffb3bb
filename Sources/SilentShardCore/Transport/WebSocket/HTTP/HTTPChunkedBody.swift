/// Decodes a `Transfer-Encoding: chunked` body (RFC 9112 §7.1). Chunk extensions and trailers are
/// skipped.
package enum HTTPChunkedBody {
    /// The body, nil while incomplete; throws on malformed input or a body over `limit` bytes.
    package static func decode(_ bytes: ArraySlice<UInt8>, limit: Int) throws(HTTPParseError) -> [UInt8]? {
        var body: [UInt8] = []
        var index = bytes.startIndex
        while true {
            guard let lineEnd = crlf(in: bytes, from: index) else { return nil }
            var size = 0
            var digits = 0
            for byte in bytes[index..<lineEnd] {
                guard let value = hexValue(byte) else {
                    if byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") { break }
                    throw .malformed
                }
                guard digits < 15 else { throw .malformed }
                size = size << 4 | value
                digits += 1
            }
            guard digits > 0 else { throw .malformed }
            index = lineEnd + 2
            if size == 0 {
                // Trailers end with an empty line.
                while true {
                    guard let end = crlf(in: bytes, from: index) else { return nil }
                    if end == index { return body }
                    index = end + 2
                }
            }
            guard size <= limit - body.count else { throw .tooLarge }
            guard bytes.endIndex - index >= size + 2 else { return nil }
            body.append(contentsOf: bytes[index..<(index + size)])
            index += size
            guard bytes[index] == 13, bytes[index + 1] == 10 else { throw .malformed }
            index += 2
        }
    }

    private static func crlf(in bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.endIndex {
            if bytes[index] == 13 && bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
