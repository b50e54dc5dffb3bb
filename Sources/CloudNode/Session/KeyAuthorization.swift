import SilentShardCore

/// The one authorization rule of `docs/protocol/session.md` §9.1–9.2 for every operation, whichever route or
/// transport carries it (duo and trio WebSocket steps, the duo export POST, the preSignFinal POST):
///
/// 1. the token's scopes allow the operation (`export` only when granted explicitly, session.md §9.3);
/// 2. a token bound to a device key (`device_binding`) is good only for that device's requests;
/// 3. on a key the node knows, the key's recorded owner is the token's subject.
///
/// The registered device key (DEVICE_NOT_REGISTERED) is checked where the share is read, against the
/// device key in the share's record. Every failure here is FORBIDDEN.
enum KeyAuthorization {
    /// Rules 1 and 2: what the credential alone decides.
    static func checkCredential(_ principal: Principal, operation: SessionOperation,
                                deviceKey: [UInt8]) throws(SetupRejection) {
        guard principal.allows(scopeName(operation)) else { throw SetupRejection(.forbidden) }
        if let binding = principal.deviceBinding, binding != deviceKey { throw SetupRejection(.forbidden) }
    }

    /// Rule 3, with the key's ownership as the store has it: a key the node does not know passes (keygen,
    /// import; later steps report KEY_NOT_FOUND); an owned key only for its owner; a key without an owner
    /// for nobody (finding 11).
    static func checkOwner(_ ownership: KeyOwnership, principal: Principal) throws(SetupRejection) {
        switch ownership {
        case .unknownKey: return
        case .owned(let owner): if owner != principal.subject { throw SetupRejection(.forbidden) }
        case .unowned: throw SetupRejection(.forbidden)
        }
    }

    /// The owner a new key is recorded with: the principal's subject; without a principal (an embedding
    /// that runs the runner with no verifier), the subject `--auth none` gives every client, so a key
    /// is never stored without an owner (finding 11).
    static func ownerSubject(_ principal: Principal?) -> String {
        principal?.subject ?? NoTokenVerifier.subject
    }

    /// The token scope of an operation: its name in the operation table.
    static func scopeName(_ operation: SessionOperation) -> String { operation.name }
}
