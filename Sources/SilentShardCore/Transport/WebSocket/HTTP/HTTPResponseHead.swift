/// A parsed HTTP/1.1 response head (status line and headers).
package struct HTTPResponseHead: Equatable, Sendable {
    /// The status code.
    package var status: Int
    /// Header fields in order, names as received.
    package var headers: [(name: String, value: String)]

    /// Every value of the header `name` (case-insensitive).
    package func values(_ name: String) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.status == rhs.status && lhs.headers.elementsEqual(rhs.headers) { $0 == $1 }
    }

    /// Largest head accepted.
    package static let maximumSize = 16 * 1024

    /// Parses a head from the start of `bytes`. Returns nil while no blank line has arrived, else
    /// the head and the number of bytes it used. Throws on malformed or oversized heads.
    package static func parse(_ bytes: [UInt8]) throws(HTTPParseError) -> (head: HTTPResponseHead, length: Int)? {
        guard let end = headEnd(bytes) else {
            if bytes.count > maximumSize { throw .malformed }
            return nil
        }
        guard end <= maximumSize else { throw .malformed }
        guard let text = UTF8Validation.string(Array(bytes[0..<(end - 4)])) else { throw .malformed }
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard !lines.isEmpty else { throw .malformed }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
              let status = Int(parts[1]), (100...599).contains(status)
        else { throw .malformed }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw .malformed }
            let name = String(line[..<colon])
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { throw .malformed }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t")
            headers.append((name, value))
        }
        return (HTTPResponseHead(status: status, headers: headers), end)
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }
}

/// A malformed HTTP response.
package enum HTTPParseError: Error, Equatable, Sendable {
    case malformed
    case tooLarge
}

extension StringProtocol {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
