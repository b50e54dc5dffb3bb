import SessionEngine

/// A WebSocket step's admission at any node (duo's node, trio's A for the app, B for A's link): the SETUP through
/// the stages `AdmissionPlans.webSocketSetup` chooses for its operation, and what an admitted step holds.
extension NodeStepRunner {
    /// A SETUP admitted at a node: what the admission holds, and the key's state read under its lease.
    struct AdmittedStep: Sendable {
        let setup: ValidatedSetup
        /// The app's frames behind its SETUP (session.md §4.2: first-round broadcasts).
        let early: [Frame]
        let authorization: Authorization
        /// The key whose signing-session count this step holds (session.md §9.5), if any.
        let signingKeyID: String?
        let lease: KeyLease?
        /// This node's CURRENT share (nil for keygen, import, reconcile and relay-only steps).
        let current: NodeKeyshare?
        /// Reconcile: the key's status at this node.
        let status: KeyStatus?
        let runner: NodeStepRunner

        /// The owner a new key is recorded with.
        var owner: String { authorization.owner }

        /// Gives back the signing-session place and the lease, and returns once the lease row is gone.
        func finish() async {
            if let signingKeyID { runner.rateLimiter?.endSigning(keyID: signingKeyID) }
            await lease?.release(store: runner.store, queue: runner.storeQueue)
        }
    }

    /// A WebSocket step's SETUP (`message`, the first binary message) through the admission stages of its
    /// operation (`AdmissionPlans.webSocketSetup`); a refusal is answered with REJECT on `connection`, bound to
    /// the SETUP once it validated, else to what its bytes name (session.md §4.5).
    func admitSetup(_ message: [UInt8], context: SetupValidationContext, principal: Principal?, address: String?,
                    linkInstance: InstanceID? = nil, connection: some NodeStepConnection) async throws(StepEnded) -> AdmittedStep {
        var request = SetupRequest(message: message, context: context, principal: principal, address: address)
        let plan = AdmissionPlans.webSocketSetup(context.operation, linkInstance: linkInstance, at: self)
        do throws(SetupRejection) {
            try await plan.admit(&request)
            guard let validated = request.validated, let authorization = request.authorization else {
                // The plan's stages set both; if one did not, what the stages took (a signing place, the key's
                // lease) is given back before the refusal.
                let rejection = SetupRejection(.internalError)
                await plan.refused(request, rejection)
                throw rejection
            }
            return AdmittedStep(setup: validated.setup, early: validated.rest, authorization: authorization,
                                signingKeyID: request.signingKeyID, lease: request.lease, current: request.current,
                                status: request.status, runner: self)
        } catch {
            let binding = request.rejectBinding
            throw StepEnded(report: await reject(error, instanceID: binding.instanceID, setupHash: binding.setupHash,
                                                 connection: connection))
        }
    }
}
