/// Extra HTTP header fields a client adds to its WebSocket upgrade request (a `DuoNetworkClient`
/// subclass's `connect(websocketAction:params:headers:)`). Checked before anything is sent, so a
/// value cannot smuggle a second header or a request line: names are RFC 9110 tokens, values are
/// visible ASCII, space or tab (no CR, LF or NUL), and the fields the client sets itself (`Host`,
/// `Upgrade`, `Connection`, `Sec-WebSocket-*`, `User-Agent`, framing fields) cannot be replaced.
/// A refused field is ``NetworkError/invalidHandshake(reason:)``.
package enum HTTPHeaderFields {
    /// At most this many fields, names of at most 256 bytes, values of at most 8,192 bytes.
    package static let maximumCount = 32
    package static let maximumNameByteCount = 256
    package static let maximumValueByteCount = 8192

    private static let reserved: Set<String> = [
        "host", "upgrade", "connection", "user-agent", "content-length", "transfer-encoding", "te", "trailer",
        "keep-alive", "proxy-connection", "expect",
    ]

    /// The fields sorted by name, or ``NetworkError/invalidHandshake(reason:)`` ("header NAME not
    /// allowed") for the first bad one.
    package static func validated(_ fields: [String: String]) throws(NetworkError) -> [(name: String, value: String)] {
        guard fields.count <= maximumCount else { throw .invalidHandshake(reason: "more than \(maximumCount) extra headers") }
        let sorted = fields.sorted { $0.key < $1.key }
        for (name, value) in sorted {
            let lowered = name.lowercased()
            guard isToken(name), !reserved.contains(lowered), !lowered.hasPrefix("sec-websocket-"),
                  isFieldValue(value)
            else { throw notAllowed(isToken(name) ? name : "(not a token)") }
        }
        return sorted.map { (name: $0.key, value: $0.value) }
    }

    /// The error for a refused field (names only: values are never echoed).
    package static func notAllowed(_ name: String) -> NetworkError {
        .invalidHandshake(reason: "header \(name) not allowed")
    }

    /// RFC 9110 §5.6.2 token: 1*tchar.
    private static func isToken(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumNameByteCount else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "A")...UInt8(ascii: "Z"):
                return true
            default:
                return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }
    }

    /// Visible ASCII, space and tab; no leading or trailing whitespace.
    private static func isFieldValue(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count <= maximumValueByteCount else { return false }
        if let first = bytes.first, let last = bytes.last,
           first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return false }
        return bytes.allSatisfy { $0 == 0x09 || (0x20...0x7E).contains($0) }
    }
}
