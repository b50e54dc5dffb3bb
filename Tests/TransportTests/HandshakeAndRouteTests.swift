import Foundation
import Testing
@testable import SilentShardCore

@Suite("Opening handshake, HTTP parsing, routes", .timeLimit(.minutes(30)))
struct HandshakeAndRouteTests {
    let endpoint = try! NetworkEndpoint(URL(string: "wss://example.com/v3/trio/keygen?params=ab")!)

    func head(_ text: String) throws -> HTTPResponseHead {
        let parsed = try HTTPResponseHead.parse(Array(text.utf8))
        return try #require(parsed?.head)
    }

    @Test func rfcAcceptKey() {
        let handshake = WebSocketHandshake(endpoint: endpoint, subprotocol: "trio", key: "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(handshake.expectedAccept == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let request = String(decoding: handshake.request, as: UTF8.self)
        #expect(request.hasPrefix("GET /v3/trio/keygen?params=ab HTTP/1.1\r\nHost: example.com\r\n"))
        #expect(request.contains("Sec-WebSocket-Protocol: trio\r\n"))
        #expect(!request.contains("Sec-WebSocket-Extensions"))
    }

    @Test func extraHeadersFollowTheClientsOwn() throws {
        let fields = try HTTPHeaderFields.validated(["X-Trace": "a b\tc", "Authorization": "Bearer t"])
        let handshake = WebSocketHandshake(endpoint: endpoint, subprotocol: "trio", key: "dGhlIHNhbXBsZSBub25jZQ==",
                                           headers: fields)
        let request = String(decoding: handshake.request, as: UTF8.self)
        #expect(request.hasSuffix("\r\nAuthorization: Bearer t\r\nX-Trace: a b\tc\r\n\r\n"))
        #expect(request.components(separatedBy: "\r\n\r\n").count == 2)
        #expect(throws: HTTPHeaderFields.notAllowed("X-A")) { try HTTPHeaderFields.validated(["X-A": "1\n2"]) }
        #expect(throws: HTTPHeaderFields.notAllowed("Connection")) { try HTTPHeaderFields.validated(["Connection": "close"]) }
        #expect(throws: HTTPHeaderFields.notAllowed("(not a token)")) { try HTTPHeaderFields.validated(["X:A": "1"]) }
        #expect(throws: HTTPHeaderFields.notAllowed("(not a token)")) { try HTTPHeaderFields.validated(["": "1"]) }
        #expect(HTTPHeaderFields.notAllowed("X-A") == .invalidHandshake(reason: "header X-A not allowed"))
        let many = Dictionary(uniqueKeysWithValues: (0...HTTPHeaderFields.maximumCount).map { ("X-\($0)", "v") })
        #expect(throws: NetworkError.self) { try HTTPHeaderFields.validated(many) }
        #expect(try HTTPHeaderFields.validated([:]).isEmpty)
    }

    @Test func validatesTheAnswer() throws {
        let handshake = WebSocketHandshake(endpoint: endpoint, subprotocol: "trio", key: "dGhlIHNhbXBsZSBub25jZQ==")
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
        try handshake.validate(try head(good + "Sec-WebSocket-Protocol: trio\r\n\r\n"))
        #expect(throws: NetworkError.subprotocolMismatch(offered: "trio", selected: nil)) {
            try handshake.validate(try head(good + "\r\n"))
        }
        #expect(throws: NetworkError.subprotocolMismatch(offered: "trio", selected: "duo")) {
            try handshake.validate(try head(good + "Sec-WebSocket-Protocol: duo\r\n\r\n"))
        }
        #expect(throws: NetworkError.invalidHandshake(reason: "extension not offered")) {
            try handshake.validate(try head(good + "Sec-WebSocket-Protocol: trio\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"))
        }
        #expect(throws: NetworkError.handshakeRejected(status: 403)) {
            try handshake.validate(try head("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"))
        }
        #expect(throws: NetworkError.invalidHandshake(reason: "wrong Sec-WebSocket-Accept")) {
            try handshake.validate(try head(good.replacingOccurrences(of: "xOo=", with: "xOp=") + "Sec-WebSocket-Protocol: trio\r\n\r\n"))
        }
    }

    @Test func httpHeadParsing() throws {
        #expect(try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nA: b\r\n".utf8)) == nil)
        let parsed = try #require(try HTTPResponseHead.parse(Array("HTTP/1.1 200 OK\r\nA:  b \r\n\r\nxyz".utf8)))
        #expect(parsed.head.status == 200)
        #expect(parsed.head.values("a") == ["b"])
        #expect(parsed.length == 27)
        #expect(throws: HTTPParseError.malformed) { try HTTPResponseHead.parse(Array("HTTP/1.1 2000 OK\r\n\r\n".utf8)) }
        #expect(throws: HTTPParseError.malformed) { try HTTPResponseHead.parse(Array("SMTP 200\r\n\r\n".utf8)) }
        #expect(throws: HTTPParseError.malformed) { try HTTPResponseHead.parse([UInt8](repeating: 65, count: 20_000)) }
    }

    @Test func chunkedBodies() throws {
        let body = Array("4\r\nWiki\r\n6;ext=1\r\npedia \r\n0\r\nTrailer: x\r\n\r\n".utf8)
        #expect(try HTTPChunkedBody.decode(body[...], limit: 100) == Array("Wikipedia ".utf8))
        #expect(try HTTPChunkedBody.decode(body.dropLast(2), limit: 100) == nil)
        #expect(throws: HTTPParseError.tooLarge) { try HTTPChunkedBody.decode(body[...], limit: 5) }
        #expect(throws: HTTPParseError.malformed) { try HTTPChunkedBody.decode(Array("zz\r\n".utf8)[...], limit: 5) }
    }

    @Test func routes() throws {
        let trio = try NetworkRoute.url(base: "wss://host.example:8443/", segments: ["trio", "eddsa", "keygen"], params: "00ff", websocket: true)
        #expect(trio.absoluteString == "wss://host.example:8443/v3/trio/eddsa/keygen?params=00ff")
        let post = try NetworkRoute.url(base: "wss://host.example/prefix", segments: ["trio", "presign-final"], params: nil, websocket: false)
        #expect(post.absoluteString == "https://host.example/prefix/v3/trio/presign-final")
        let plain = try NetworkRoute.url(base: "http://127.0.0.1:80", segments: ["ecdsa", "sign"], params: nil, websocket: true)
        #expect(plain.absoluteString == "ws://127.0.0.1:80/v3/ecdsa/sign")
        let odd = try NetworkRoute.url(base: "ws://h", segments: ["a b", "c?d"], params: "x&y=z+1#", websocket: true)
        #expect(odd.absoluteString == "ws://h/v3/a%20b/c%3Fd?params=x%26y%3Dz%2B1%23")
        #expect(throws: NetworkError.invalidURL) { try NetworkRoute.url(base: "ftp://x", segments: [], params: nil, websocket: true) }
        #expect(throws: NetworkError.invalidURL) { try NetworkRoute.url(base: "not a url", segments: [], params: nil, websocket: true) }
        let endpoint = try NetworkEndpoint(URL(string: "ws://[::1]:9000/v3/a/b?params=1")!)
        #expect(endpoint.host == "::1")
        #expect(endpoint.hostHeader == "[::1]:9000")
        #expect(endpoint.target == "/v3/a/b?params=1")
    }

    @Test func configNeverShowsTheToken() {
        let config = WebsocketConfig(url: "wss://x", authenticationToken: "secret-token-123")
        #expect(!config.description.contains("secret-token-123"))
        #expect(!String(reflecting: config).contains("secret-token-123"))
        #expect(!"\(config)".contains("secret-token-123"))
        var dumped = ""
        dump(config, to: &dumped)
        #expect(!dumped.contains("secret-token-123"))
        // A provider is shown as set, never called by a description.
        let provided = WebsocketConfig(url: "wss://x", tokenProvider: { _ in Issue.record("called"); return "secret-token-123" })
        #expect(provided.description.contains("tokenProvider: set"))
        var dumpedProvided = ""
        dump(provided, to: &dumpedProvided)
        #expect(!dumpedProvided.contains("secret-token-123"))
    }
}
