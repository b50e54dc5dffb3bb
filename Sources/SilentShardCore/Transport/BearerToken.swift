/// The syntax of a bearer token (RFC 6750 §2.1 `b64token`): `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
/// "+" / "/" ) *"="`, at most 8,192 bytes. JWTs, opaque API keys and base64 credentials all fit it.
///
/// Checked wherever a token crosses into an HTTP header or reaches a verifier: the node refuses any
/// other token before a verifier runs (a token is outside input), and the SDK's POST clients never
/// write another into `Authorization: Bearer …` — so a CR, LF or NUL in a token can never add a header
/// or smuggle a request into a verifier hook's call.
package enum BearerToken {
    /// The longest token accepted (the node's token message limit, `docs/protocol/session.md` §2.1).
    package static let maximumByteCount = 8192

    /// Whether `token` is a well-formed b64token of at most `maximumByteCount` bytes.
    package static func isWellFormed(_ token: String) -> Bool {
        isWellFormed(bytes: Array(token.utf8))
    }

    /// Whether `bytes` are a well-formed b64token of at most `maximumByteCount` bytes (ASCII only, so
    /// no decoding question arises).
    package static func isWellFormed(bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maximumByteCount else { return false }
        var index = 0
        while index < bytes.count, isTokenCharacter(bytes[index]) { index += 1 }
        guard index > 0 else { return false }
        while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
        return index == bytes.count
    }

    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }
}
