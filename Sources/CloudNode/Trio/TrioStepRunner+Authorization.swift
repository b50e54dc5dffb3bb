import Foundation
import MPCCrypto
import SilentShardCore

/// Authorization at a trio node (`specs/session.md` §9.1–9.3). A checks with the principal its
/// server's verifier gave; B independently with the principal of the token A forwards in LINK_OPEN.
extension TrioStepRunner {
    /// The outcome of a node's authorization of one SETUP.
    struct Authorization: Sendable {
        /// The token subject, recorded as a new key's owner in the commit transaction (§9.2); without a
        /// principal, `anonymous` (a key is never stored without an owner, finding 11).
        var owner: String
        /// A recover authorized to register SETUP's device key in place of the registered one (§9.3).
        var rebind: Bool
    }

    /// §9.1: the route's operation must be in the token's scopes (trio export too needs the explicit
    /// scope `export`: `Principal.allows` never grants it by default, §9.3); with a `device_binding`,
    /// SETUP's device key must equal it. §9.2: a session on a key this node knows must come from the
    /// key's owner subject. §9.3: a recover whose device key is not the registered one needs the
    /// explicit scope `recover`, a binding to that device key and the owner's subject (FORBIDDEN
    /// otherwise). `principal` nil (no verifier information): nothing is checked; a new key is recorded as
    /// owned by `anonymous`, the subject `--auth none` gives.
    func authorize(_ setup: ValidatedSetup, principal: Principal?) async throws(SetupRejection) -> Authorization {
        guard let principal else { return Authorization(owner: KeyAuthorization.ownerSubject(nil), rebind: false) }
        try KeyAuthorization.checkCredential(principal, operation: setup.operation, deviceKey: setup.deviceKey.identity)
        let authorized = Authorization(owner: principal.subject, rebind: false)
        guard setup.operation != .keygen, setup.operation != .import, let keyIDBytes = setup.payload.keyID else {
            return authorized
        }
        let keyID = Hex.encode(keyIDBytes)
        let state: (owner: KeyOwnership, device: [UInt8]?)
        do {
            state = try await onStoreQueue { [store] () throws(NodeStoreError) in
                let owner = try store.ownership(keyId: keyID)
                let device = try store.share(keyId: keyID).flatMap { try? NodeShareBlob(bytes: $0.bytes) }?.deviceIdentity
                return (owner, device)
            }
        } catch {
            throw SetupRejection(.storageFailure)
        }
        try KeyAuthorization.checkOwner(state.owner, principal: principal)
        guard setup.operation == .recover, let registered = state.device, registered != setup.deviceKey.identity else {
            return authorized
        }
        // §9.3: recover with a new device key.
        guard principal.grantsExplicitly("recover"), principal.deviceBinding == setup.deviceKey.identity,
              case .owned = state.owner
        else { throw SetupRejection(.forbidden) }
        return Authorization(owner: principal.subject, rebind: true)
    }

    /// A SETUP admitted at A or B: what the admission holds, and the key's state read under its lease.
    struct AdmittedStep: Sendable {
        let admission: NodeAdmission.Admitted<Authorization>
        /// This node's CURRENT share (nil for keygen, import, reconcile and relay-only steps).
        let current: NodeKeyshare?
        /// Reconcile: the key's status at this node.
        let status: KeyStatus?
    }

    /// Admission at a trio node, A or B: `NodeAdmission`'s stages (durable replay, authorization with
    /// `principal`, rate limits, the key's lease), then key state and bans (SETUP steps 9–10). A refusal
    /// after the admission gives back what it took.
    func admitStep(_ setup: ValidatedSetup, principal: Principal?, now: UInt64) async throws(SetupRejection) -> AdmittedStep {
        let admitted = try await admission.admit(setup, now: now, rateLimitKey: principal?.rateLimitKey ?? "") {
            () throws(SetupRejection) in try await authorize(setup, principal: principal)
        }
        do {
            if setup.operation == .reconcile {
                return AdmittedStep(admission: admitted, current: nil, status: try await reconcileStatus(setup))
            }
            return AdmittedStep(admission: admitted, current: try await keyState(setup, rebind: admitted.authorization.rebind),
                                status: nil)
        } catch {
            admitted.end()
            throw error
        }
    }
}
