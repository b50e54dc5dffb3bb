import Foundation

/// One complete WebSocket message.
package enum WebSocketMessage: Equatable, Sendable {
    case text(String)
    case binary(Data)

    /// The message's bytes (UTF-8 for text).
    package var data: Data {
        switch self {
        case .text(let string): Data(string.utf8)
        case .binary(let data): data
        }
    }
}

/// Strict UTF-8 validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
package enum UTF8Validation {
    /// The string, or nil if `bytes` is not valid UTF-8.
    package static func string(_ bytes: [UInt8]) -> String? {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            return String(validating: bytes, as: UTF8.self)
        }
        let decoded = String(decoding: bytes, as: UTF8.self)
        return decoded.utf8.elementsEqual(bytes) ? decoded : nil
    }
}
