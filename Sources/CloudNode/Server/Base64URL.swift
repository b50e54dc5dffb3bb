import Foundation

/// Unpadded base64url (RFC 4648 §5), as JWTs use it.
enum Base64URL {
    /// Decodes; nil on any character outside the alphabet or an impossible length.
    static func decode(_ text: Substring) -> [UInt8]? {
        guard text.utf8.count % 4 != 1 else { return nil }
        var base64 = ""
        base64.reserveCapacity(text.utf8.count + 3)
        for character in text.unicodeScalars {
            switch character {
            case "A"..."Z", "a"..."z", "0"..."9": base64.unicodeScalars.append(character)
            case "-": base64.append("+")
            case "_": base64.append("/")
            default: return nil
            }
        }
        while base64.utf8.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    /// Encodes without padding.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
