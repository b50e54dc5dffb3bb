import Foundation

/// One HTTP POST to a step route (trio preSignFinal, duo export): body in, body out.
package struct PostRequest: Sendable {
    package var route: NodeRoute
    package var params: String?
    package var principal: Principal
    package var body: Data
    /// The caller's token as received (`Authorization: Bearer`), already verified by the server; trio
    /// node A forwards it to B with a relayed preSignFinal (session.md §2.3).
    package var token: String? = nil
    /// The client's address as the session.md §9.5 limits count it (refused POSTs are counted against it).
    package var clientAddress: String? = nil
}

/// The answer to a POST: a status (200 unless no frame can be produced, session.md §2.2) and a body.
package struct PostResponse: Sendable, Equatable {
    package var status: Int
    package var body: Data

    package init(status: Int = 200, body: Data) {
        self.status = status
        self.body = body
    }
}

/// Serves POSTs on the Swift side, never on the service thread.
package protocol PostHandler: Sendable {
    func handle(_ request: PostRequest) async throws -> PostResponse
}

/// Returns the body unchanged (tests).
package struct EchoPostHandler: PostHandler {
    package init() {}
    package func handle(_ request: PostRequest) async throws -> PostResponse { PostResponse(body: request.body) }
}

/// Answers 501 (no POST handler yet).
package struct UnservedPostHandler: PostHandler {
    package init() {}
    package func handle(_ request: PostRequest) async throws -> PostResponse {
        PostResponse(status: 501, body: Data("route not served by this node\n".utf8))
    }
}
