import Foundation

/// Connection strings as they may appear in logs and errors: the password (URL user-info or a
/// `password=` parameter) replaced by `***`.
enum PostgresURL {
    /// True for `postgres://` and `postgresql://` URLs (the node's `--database` switch).
    static func isPostgres(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// `message` with every occurrence of the connection string's password (as written and
    /// percent-decoded) replaced by `***`.
    static func scrub(_ message: String, conninfo: String) -> String {
        var secrets: [String] = []
        if let scheme = conninfo.range(of: "://") {
            let rest = conninfo[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                secrets.append(String(rest[rest.index(after: colon)..<at]))
            }
        }
        var remaining = Substring(conninfo)
        while let range = remaining.range(of: "password=", options: .caseInsensitive) {
            let after = remaining[range.upperBound...]
            let end = after.firstIndex(where: { $0 == "&" || $0 == " " }) ?? after.endIndex
            secrets.append(String(after[..<end]))
            remaining = after[end...]
        }
        var out = message
        for secret in secrets where !secret.isEmpty {
            for form in Set([secret, secret.removingPercentEncoding ?? secret]) where !form.isEmpty {
                out = out.replacingOccurrences(of: form, with: "***")
            }
        }
        return out
    }

    static func redacted(_ url: String) -> String {
        var text = url
        if let scheme = text.range(of: "://") {
            let rest = text[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@"),
               let colon = rest[..<at].firstIndex(of: ":") {
                text.replaceSubrange(text.index(after: colon)..<at, with: "***")
            }
        }
        // key=value forms (URL query or keyword/value conninfo).
        var parts: [String] = []
        var remaining = Substring(text)
        while let range = remaining.range(of: "password=", options: .caseInsensitive) {
            parts.append(String(remaining[..<range.upperBound]) + "***")
            let after = remaining[range.upperBound...]
            remaining = after[(after.firstIndex(where: { $0 == "&" || $0 == " " }) ?? after.endIndex)...]
        }
        return parts.joined() + remaining
    }
}
