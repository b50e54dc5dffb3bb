import Foundation
import SilentShardCore

/// The node's one POST handler (`docs/protocol/session.md` §2.2), for duo and trio alike, dispatching by the POST
/// pipeline of the operation the operation table serves by POST at the route's action:
///
/// * `export` (duo, `POST /v3/{ecdsa|eddsa}/export`, the app's backend): ``NodeStepRunner/exportPost(_:)``;
/// * `presign-final` (duo since v1.3, trio; `POST /v3/{path}/[eddsa/]presign-final`): a FINAL_REQUEST or a
///   PRESIG_QUERY by its frame kind, at this node or, at trio A, relayed to B
///   (``NodeStepRunner/preSignFinal(body:token:principal:algorithm:clientAddress:)``).
///
/// Each request passes the admission stages its kind runs (`AdmissionPlans`) before its operation. Other POST
/// routes, or routes of another mode than the runner's, go to `fallback`.
package struct NodePostHandler: PostHandler {
    package let runner: NodeStepRunner
    package let fallback: any PostHandler

    /// The largest preSignFinal body: a frame header, a nonce and 64 KiB (session.md §3.6).
    static let maximumPreSignFinalBody = FrameHeader.byteCount + 24 + 64 * 1024

    /// - Parameters:
    ///   - runner: the node's runner (node key, share store, replay window, rate limits, clock are shared).
    ///   - fallback: serves every other POST route (default: 501).
    package init(runner: NodeStepRunner, fallback: any PostHandler = UnservedPostHandler()) {
        self.runner = runner
        self.fallback = fallback
    }

    /// The operation a POST route serves at this node, nil for one it does not serve.
    static func operation(of route: NodeRoute, party: NodeParty) -> SessionOperation? {
        guard route.mode == (party.mode == .duo ? .duo : .trio) else { return nil }
        return OperationTable.postOperation(action: route.action, in: party.mode)
    }

    package func handle(_ request: PostRequest) async throws -> PostResponse {
        switch Self.operation(of: request.route, party: runner.party)?.row.admission.post {
        case .export?:
            return await runner.exportPost(request)
        case .presignature?:
            guard request.body.count <= Self.maximumPreSignFinalBody,
                  let response = await runner.preSignFinal(body: [UInt8](request.body), token: request.token.map { Array($0.utf8) },
                                                           principal: request.principal, algorithm: request.route.algorithm,
                                                           clientAddress: request.clientAddress)
            else { return PostResponse(status: 400, body: Data("unparsable preSignFinal request\n".utf8)) }
            return PostResponse(body: Data(response))
        default:
            return try await fallback.handle(request)
        }
    }
}
