import Foundation

/// Builds the URLs of the default clients from `WebsocketConfig.url` and an action's route.
package enum NetworkRoute {
    /// The name of the query item that carries `params` (for example a hex key id).
    package static let paramsQueryItem = "params"

    private static let queryValueAllowed: CharacterSet = {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+;#")
        return allowed
    }()

    /// `base` + `/v3/` + `segments`, with `params` as a query item. `websocket` selects `ws`/`wss`
    /// (else `http`/`https`); either family of scheme is accepted in `base`.
    package static func url(base: String, segments: [String], params: String?, websocket: Bool) throws(NetworkError) -> URL {
        guard var components = URLComponents(string: base), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty
        else { throw .invalidURL }
        let secure: Bool
        switch scheme {
        case "wss", "https": secure = true
        case "ws", "http": secure = false
        default: throw .invalidURL
        }
        components.scheme = websocket ? (secure ? "wss" : "ws") : (secure ? "https" : "http")
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        var path = prefix + "/v3"
        for segment in segments {
            guard let encoded = segment.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed), !encoded.isEmpty
            else { throw .invalidURL }
            path += "/" + encoded
        }
        components.percentEncodedPath = path
        if let params {
            // Strict: `&`, `=`, `+`, `;` and `#` are encoded too, so any value stays one query item.
            guard let value = params.addingPercentEncoding(withAllowedCharacters: queryValueAllowed) else { throw .invalidURL }
            components.percentEncodedQuery = "\(paramsQueryItem)=\(value)"
        } else {
            components.percentEncodedQuery = nil
        }
        components.fragment = nil
        guard let url = components.url else { throw .invalidURL }
        return url
    }
}

/// Where a connection goes: parsed once from a `ws`/`wss`/`http`/`https` URL.
package struct NetworkEndpoint: Sendable, Equatable {
    package var url: URL
    package var secure: Bool
    /// Host name or IP literal (without IPv6 brackets).
    package var host: String
    package var port: Int
    /// The request target: percent-encoded path and query.
    package var target: String
    /// The `Host` header value.
    package var hostHeader: String

    package init(_ url: URL) throws(NetworkError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), var host = components.host, !host.isEmpty
        else { throw .invalidURL }
        switch scheme {
        case "wss", "https": secure = true
        case "ws", "http": secure = false
        default: throw .invalidURL
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let defaultPort = secure ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65535).contains(port) else { throw .invalidURL }
        self.url = url
        self.host = host
        self.port = port
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        self.target = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        let hostLiteral = host.contains(":") ? "[\(host)]" : host
        self.hostHeader = port == defaultPort ? hostLiteral : "\(hostLiteral):\(port)"
    }
}
