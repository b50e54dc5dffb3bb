import SilentShardTestSupport
import Testing
import trio

/// A stand-in for one session step: connect with the provider's action → send/read → disconnect.
func runStep(_ client: NetworkClient, _ action: NetworkAction, params: String?, send message: Data) async throws -> Data {
    try await client.connect(action: action, params: params)
    try await client.send(bytes: message)
    let reply = try await client.read()
    try await client.disconnect()
    return reply
}

@Suite("Custom transport and provider over an in-memory pipe", .timeLimit(.minutes(30)))
struct InMemoryTransportTests {
    @Test func customActionsDriveThePipe() async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        let provider = CustomActions()
        let nodeTask = Task {
            var seen: [String] = []
            for _ in 0..<3 {
                try await node.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
                let request = try await node.read()
                seen.append(String(decoding: request, as: UTF8.self))
                try await node.send(bytes: Data(request.reversed()))
                try await node.disconnect()
            }
            return seen
        }
        #expect(try await runStep(app, provider.keygen, params: nil, send: Data("abc".utf8)) == Data("cba".utf8))
        #expect(try await runStep(app, provider.sign, params: "00ff", send: Data("xy".utf8)) == Data("yx".utf8))
        #expect(try await runStep(app, provider.reconcile, params: "00ff", send: Data()) == Data())
        #expect(try await nodeTask.value == ["abc", "xy", ""])
        #expect(app.connections.map(\.action.action) == ["keygen", "signature", "reconcile"])
        #expect(app.connections.map(\.action.path) == ["my-keygen-route", "trio", "trio"])
        #expect(app.connections[1].action is TrioAction.ECDSA.Signature)
        #expect(app.connections.map(\.params) == [nil, "00ff", "00ff"])
        #expect(app.connections[2].action.protocol == "-no-reconcile")
    }

    @Test func textAndDisconnectSemantics() async throws {
        let (left, right) = InMemoryNetworkClient.pair()
        try await left.connect(action: TrioAction.EdDSA.Keygen(), params: nil)
        try await right.connect(action: TrioAction.EdDSA.Keygen(), params: nil)
        try await left.send(text: "token")
        #expect(try await right.readMessage() == .text("token"))
        try await right.disconnect()
        await #expect(throws: NetworkError.notConnected) { try await right.read() }
        await #expect(throws: NetworkError.postRequestUnsupported) {
            _ = try await left.sendPostRequest(action: TrioAction.EdDSA.PreSignatureFinal(), params: nil, body: Data())
        }
    }
}
