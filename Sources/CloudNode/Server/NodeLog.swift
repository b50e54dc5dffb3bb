import Foundation

/// Where the server's log lines go (one line each; never tokens, keys or message bytes).
package struct NodeLogger: Sendable {
    private let sink: @Sendable (String) -> Void

    package init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    /// Lines to standard error with a UTC timestamp.
    package static let standardError = NodeLogger { line in
        FileHandle.standardError.write(Data("\(Date().ISO8601Format()) node: \(line)\n".utf8))
    }

    /// Discards everything.
    package static let silent = NodeLogger { _ in }

    func log(_ line: String) { sink(line) }
}
