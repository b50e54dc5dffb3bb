import SilentShardCore

/// The one place that says which admission stages each request kind runs, in which order (issue 34 item 3,
/// `docs/node-server.md` "One admission for every request"). The stages are in `SetupStages`, `ExportStages`
/// and `PresignatureStages`; their order follows `docs/protocol/session.md` §4.3 (steps 1–10) and §8.3.
enum AdmissionPlans {
    /// A WebSocket step's SETUP on `operation`'s route, at duo's node, trio's A, or trio's B (`linkInstance`: the
    /// instance id of the link A opened for it), with the stages its table row's admission profile names:
    /// limits before verifying → validate (steps 1–8; a failed device signature counted) → durable replay →
    /// authorize → rate limits (key creations, signing sessions) → lease (share-changing steps, reconcile) →
    /// ban (all but reconcile, session.md §9.4) → key state.
    static func webSocketSetup(_ operation: SessionOperation, linkInstance: InstanceID? = nil,
                               at runner: NodeStepRunner) -> AdmissionPipeline<SetupRequest> {
        var stages = [runner.limitsBeforeVerifying, runner.countDeviceSignatureFailures, runner.validate]
        if let linkInstance { stages.append(runner.sameInstance(as: linkInstance)) }
        stages += [runner.durableReplay, runner.authorizeStep]
        let profile = operation.row.admission
        if profile.rateLimit != nil { stages.append(runner.rateLimits) }
        if profile.lease { stages.append(runner.lease) }
        if profile.ban { stages.append(runner.ban) }
        stages.append(runner.keyStateStage)
        return AdmissionPipeline(stages)
    }

    /// The duo export POST (session.md §9.3): the same validation, then every check that reads before anything is
    /// written (security review 2, finding 4) — credential, fields, ban, key state — and only then the durable
    /// replay record and the generation. Refusals after validation count against the caller; once the key's
    /// registered device signed, they are audited.
    static func exportPost(at runner: NodeStepRunner) -> AdmissionPipeline<SetupRequest> {
        AdmissionPipeline([
            runner.limitsBeforeVerifying, runner.countDeviceSignatureFailures, runner.validate,
            runner.countRefusals, runner.authorizeExportCredential, runner.exportFields, runner.ban,
            runner.exportKeyState, runner.auditExportRefusals, runner.durableReplay, runner.exportGeneration,
        ])
    }

    /// A preSignFinal POST body (session.md §8.3–8.6), by what its header makes it at this node. Every kind is first
    /// limited and counted (session.md §9.5); a FINAL_REQUEST is then authorized on a read (scope, the presignature's
    /// owner and device binding: PRESIG_NOT_FOUND alike), answered from its state, limited and counted per (principal,
    /// device key), refused for a banned device, and authenticated before the consuming transaction.
    static func presignatureRequest(_ kind: PresignatureRequest.Kind,
                                    at runner: NodeStepRunner) -> AdmissionPipeline<PresignatureRequest> {
        let counted = [runner.refusalLimits, runner.countPresignatureRefusals]
        switch kind {
        case .finalRequest:
            return AdmissionPipeline(counted + [
                runner.preSignFinalScope, runner.presignatureAuthorization, runner.countAuthenticatorFailures,
                runner.presignatureState, runner.deviceLimits, runner.presignatureBan, runner.finalRequestAuthenticator,
            ])
        case .presigQuery:
            return AdmissionPipeline(counted + [runner.queryPayload, runner.preSignFinalScope])
        case .relay:
            return AdmissionPipeline(counted + [runner.preSignFinalScope])
        case .refused(let code):
            return AdmissionPipeline(counted + [runner.refuse(code)])
        }
    }
}
