import Foundation

/// A small strict JSON reader and writer (RFC 8259, <https://www.rfc-editor.org/rfc/rfc8259>) for the
/// documents the chain helpers take from outside (EIP-712 typed data). Stricter than `JSONSerialization`
/// where that matters for signing: duplicate object keys are refused (not "last one wins"), numbers keep
/// their exact text (no rounding through `Double`), the input must be UTF-8 without a byte-order mark,
/// lone surrogates in `\u` escapes are refused, nesting is at most `maximumDepth` levels, and nothing may
/// follow the value but whitespace. Every failure is `ChainError.invalidEncoding`.
enum StrictJSON {
    /// A JSON value. Objects keep their members in document order.
    indirect enum Value: Sendable {
        case object([(key: String, value: Value)])
        case array([Value])
        case string(String)
        /// The number's text as written (RFC 8259 §6 grammar, already checked).
        case number(String)
        case bool(Bool)
        case null
    }

    static let maximumDepth = 64

    /// The single value `bytes` holds (strict, see above).
    static func parse(_ bytes: [UInt8]) throws(ChainError) -> Value {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.isAtEnd else { throw .invalidEncoding(reason: "JSON: trailing characters") }
        return value
    }

    /// The compact JSON text of `value` (no whitespace; members in the order given; strings escaped as
    /// RFC 8259 requires, other characters as UTF-8).
    static func serialize(_ value: Value) -> [UInt8] {
        var out: [UInt8] = []
        write(value, into: &out)
        return out
    }

    private static func write(_ value: Value, into out: inout [UInt8]) {
        switch value {
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string(let text): writeString(text, into: &out)
        case .number(let text): out += Array(text.utf8)
        case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
        case .null: out += Array("null".utf8)
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0x00..<0x20: out += Array("\\u00".utf8) + [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// Bounds-checked reading of JSON text.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

        mutating func skipWhitespace() {
            while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { offset += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(ChainError) {
            guard peek() == byte else { throw .invalidEncoding(reason: "JSON: expected '\(Character(Unicode.Scalar(byte)))'") }
            offset += 1
        }

        mutating func literal(_ word: String) throws(ChainError) {
            for byte in word.utf8 { try expect(byte) }
        }

        mutating func value(depth: Int) throws(ChainError) -> Value {
            guard let byte = peek() else { throw .invalidEncoding(reason: "JSON: truncated") }
            switch byte {
            case UInt8(ascii: "{"):
                guard depth < StrictJSON.maximumDepth else { throw .invalidEncoding(reason: "JSON: nested too deeply") }
                return try object(depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < StrictJSON.maximumDepth else { throw .invalidEncoding(reason: "JSON: nested too deeply") }
                return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw .invalidEncoding(reason: "JSON: unexpected character")
            }
        }

        mutating func object(depth: Int) throws(ChainError) -> Value {
            try expect(UInt8(ascii: "{"))
            var members: [(key: String, value: Value)] = []
            var keys = Set<[UInt8]>()
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                offset += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw .invalidEncoding(reason: "JSON: expected a member name") }
                let key = try string()
                guard keys.insert(Array(key.utf8)).inserted else {
                    throw .invalidEncoding(reason: "JSON: duplicate key \(TypedDataText.quoted(key))")
                }
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                members.append((key, try value(depth: depth)))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    offset += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(ChainError) -> Value {
            try expect(UInt8(ascii: "["))
            var items: [Value] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                offset += 1
                return .array(items)
            }
            while true {
                skipWhitespace()
                items.append(try value(depth: depth))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    offset += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return .array(items)
            }
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, returned as written.
        mutating func number() throws(ChainError) -> String {
            let start = offset
            func digits(_ reader: inout Reader) -> Int {
                var count = 0
                while let byte = reader.peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    reader.offset += 1
                    count += 1
                }
                return count
            }
            if peek() == UInt8(ascii: "-") { offset += 1 }
            if peek() == UInt8(ascii: "0") {
                offset += 1
            } else {
                guard digits(&self) > 0 else { throw .invalidEncoding(reason: "JSON: malformed number") }
            }
            if peek() == UInt8(ascii: ".") {
                offset += 1
                guard digits(&self) > 0 else { throw .invalidEncoding(reason: "JSON: malformed number") }
            }
            if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
                offset += 1
                if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
                guard digits(&self) > 0 else { throw .invalidEncoding(reason: "JSON: malformed number") }
            }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        /// A string: escapes resolved, control characters refused, UTF-8 checked.
        mutating func string() throws(ChainError) -> String {
            try expect(UInt8(ascii: "\""))
            var out: [UInt8] = []
            while true {
                guard let byte = peek() else { throw .invalidEncoding(reason: "JSON: unterminated string") }
                offset += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: out, as: UTF8.self) else {
                        throw .invalidEncoding(reason: "JSON: string is not UTF-8")
                    }
                    return text
                case UInt8(ascii: "\\"):
                    try escape(into: &out)
                case 0x00..<0x20:
                    throw .invalidEncoding(reason: "JSON: control character in a string")
                default:
                    out.append(byte)
                }
            }
        }

        private mutating func escape(into out: inout [UInt8]) throws(ChainError) {
            guard let byte = peek() else { throw .invalidEncoding(reason: "JSON: unterminated string") }
            offset += 1
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(byte)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = UInt32(try hexQuad())
                if (0xD800..<0xDC00).contains(scalar) {
                    guard peek() == UInt8(ascii: "\\") else { throw .invalidEncoding(reason: "JSON: lone surrogate") }
                    offset += 1
                    guard peek() == UInt8(ascii: "u") else { throw .invalidEncoding(reason: "JSON: lone surrogate") }
                    offset += 1
                    let low = UInt32(try hexQuad())
                    guard (0xDC00..<0xE000).contains(low) else { throw .invalidEncoding(reason: "JSON: lone surrogate") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00..<0xE000).contains(scalar) {
                    throw .invalidEncoding(reason: "JSON: lone surrogate")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw .invalidEncoding(reason: "JSON: invalid escape") }
                out += Array(String(Character(unicode)).utf8)
            default:
                throw .invalidEncoding(reason: "JSON: invalid escape")
            }
        }

        private mutating func hexQuad() throws(ChainError) -> UInt16 {
            var value: UInt16 = 0
            for _ in 0..<4 {
                guard let byte = peek() else { throw .invalidEncoding(reason: "JSON: invalid escape") }
                offset += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw .invalidEncoding(reason: "JSON: invalid escape")
                }
                value = value << 4 | UInt16(digit)
            }
            return value
        }
    }
}
