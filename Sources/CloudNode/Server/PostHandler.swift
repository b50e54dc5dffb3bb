import Foundation

/// One HTTP POST to a step route (trio preSignFinal, duo export): body in, body out.
public struct PostRequest: Sendable {
    public var route: NodeRoute
    public var params: String?
    public var principal: Principal
    public var body: Data
    /// The caller's token as received (`Authorization: Bearer`), already verified by the server; trio
    /// node A forwards it to B with a relayed preSignFinal (§2.3).
    public var token: String? = nil
}

/// The answer to a POST: a status (200 unless no frame can be produced, session.md §2.2) and a body.
public struct PostResponse: Sendable, Equatable {
    public var status: Int
    public var body: Data

    public init(status: Int = 200, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Serves POSTs on the Swift side, never on the service thread.
public protocol PostHandler: Sendable {
    func handle(_ request: PostRequest) async throws -> PostResponse
}

/// Returns the body unchanged (tests).
public struct EchoPostHandler: PostHandler {
    public init() {}
    public func handle(_ request: PostRequest) async throws -> PostResponse { PostResponse(body: request.body) }
}

/// Answers 501 (no POST handler yet).
public struct UnservedPostHandler: PostHandler {
    public init() {}
    public func handle(_ request: PostRequest) async throws -> PostResponse {
        PostResponse(status: 501, body: Data("route not served by this node\n".utf8))
    }
}
