import Foundation
import SilentShardTestSupport
import Testing
@testable import SilentShardCore

@Suite("HTTP POST against Python http.server", .timeLimit(.minutes(30)))
struct HTTPPostTests {
    struct Info: Decodable {
        var method: String
        var path: String
        var query: String
        var authorization: String?
        var content_type: String?
        var length: Int
    }

    func post(_ base: String, _ peer: PythonPeer, mode: String, body: Data, token: String? = "tok") async throws -> Data {
        let config = WebsocketConfig(url: base, authenticationToken: token, trustedRootCertificates: [peer.caCertificate])
        let url = try NetworkRoute.url(base: base, segments: ["trio", "presign-final"], params: mode, websocket: false)
        return try await WebSocketClientEngine(config: config).post(url: url, body: body)
    }

    @Test(arguments: [false, true])
    func postSendsBearerAndReturnsBody(secure: Bool) async throws {
        let peer = try await PythonPeer.shared()
        // ws/wss URLs map to http/https.
        let base = secure ? "wss://localhost:\(peer.httpsPort)" : "ws://127.0.0.1:\(peer.httpPort)"
        let info = try JSONDecoder().decode(Info.self, from: try await post(base, peer, mode: "info", body: Data([1, 2, 3])))
        #expect(info.method == "POST")
        #expect(info.path == "/v3/trio/presign-final")
        #expect(info.query == "params=info")
        #expect(info.authorization == "Bearer tok")
        #expect(info.content_type == "application/octet-stream")
        #expect(info.length == 3)
        let big = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        #expect(try await post(base, peer, mode: "echo", body: big) == big)
        #expect(try await post(base, peer, mode: "chunked", body: big.prefix(100_001)) == big.prefix(100_001))
        #expect(try await post(base, peer, mode: "echo", body: Data()) == Data())
        await #expect(throws: NetworkError.httpStatus(503)) { try await post(base, peer, mode: "status:503", body: Data()) }
        await #expect(throws: NetworkError.httpStatus(401)) { try await post(base, peer, mode: "status:401", body: Data()) }
    }

    @Test func noTokenNoAuthorizationHeader() async throws {
        let peer = try await PythonPeer.shared()
        let info = try JSONDecoder().decode(Info.self, from: try await post(peer.http, peer, mode: "info", body: Data(), token: nil))
        #expect(info.authorization == nil)
    }

    @Test func postRefusedFailsFast() async throws {
        let (port, held) = try refusingPort()
        defer { close(held) }
        let peer = try await PythonPeer.shared()
        let error = await thrownError { _ = try await post("http://127.0.0.1:\(port)", peer, mode: "echo", body: Data()) }
        #expect(error as? NetworkError == .connectionRefused(host: "127.0.0.1", port: port))
    }
}
