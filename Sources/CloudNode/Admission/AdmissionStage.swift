import SessionEngine

/// One stage of a request's admission at a node (issue 34 item 3): one check, or one thing taken for the request
/// (a replay record, a signing place, a lease), with one purpose.
///
/// `admit` checks or takes, and refuses with a `SetupRejection`. `refused` sees every refusal of the request
/// from this stage on — its own, a later stage's, or the operation's after admission — and gives back what
/// `admit` took or counts the refusal (session.md §9.5); it never refuses.
struct AdmissionStage<Request: Sendable>: Sendable {
    /// For logs and tests: what the stage is (`validate`, `durable replay`, …).
    let name: String
    let admit: @Sendable (inout Request) async throws(SetupRejection) -> Void
    let refused: @Sendable (Request, SetupRejection) async -> Void

    init(_ name: String, admit: @escaping @Sendable (inout Request) async throws(SetupRejection) -> Void,
         refused: @escaping @Sendable (Request, SetupRejection) async -> Void = { _, _ in }) {
        self.name = name
        self.admit = admit
        self.refused = refused
    }

    /// A stage that checks nothing and only sees refusals (counting them).
    static func observing(_ name: String, refused: @escaping @Sendable (Request, SetupRejection) async -> Void) -> Self {
        Self(name, admit: { _ throws(SetupRejection) in }, refused: refused)
    }
}

/// An ordered list of ``AdmissionStage``s: each request kind's list is chosen in one place, `AdmissionPlans`.
struct AdmissionPipeline<Request: Sendable>: Sendable {
    let stages: [AdmissionStage<Request>]

    init(_ stages: [AdmissionStage<Request>]) { self.stages = stages }

    /// The stages' names, in order.
    var names: [String] { stages.map(\.name) }

    /// Runs the stages in order; the first refusal ends the admission, and every stage that had started (the
    /// refusing one included), latest first, sees it before it is rethrown.
    func admit(_ request: inout Request) async throws(SetupRejection) {
        for (index, stage) in stages.enumerated() {
            do {
                try await stage.admit(&request)
            } catch {
                await refused(request, error, startedStages: index + 1)
                throw error
            }
        }
    }

    /// A refusal after admission (the operation's): every stage sees it, latest first.
    func refused(_ request: Request, _ rejection: SetupRejection) async {
        await refused(request, rejection, startedStages: stages.count)
    }

    private func refused(_ request: Request, _ rejection: SetupRejection, startedStages: Int) async {
        for stage in stages.prefix(startedStages).reversed() { await stage.refused(request, rejection) }
    }
}
