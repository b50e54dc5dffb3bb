import SilentShardCore

/// The one authorization rule of `specs/session.md` §9.1–9.2 for every operation, whichever route or
/// transport carries it (duo and trio WebSocket steps, the duo export POST, the preSignFinal POST):
///
/// 1. the token's scopes allow the operation (`export` only when granted explicitly, §9.3);
/// 2. a token bound to a device key (`device_binding`) is good only for that device's requests;
/// 3. on a key the node knows, the key's recorded owner is the token's subject.
///
/// The registered device key (DEVICE_NOT_REGISTERED) is checked where the share is read, against the
/// device key in the share's record. Every failure here is FORBIDDEN.
enum KeyAuthorization {
    /// Rules 1 and 2: what the credential alone decides.
    static func checkCredential(_ principal: Principal, operation: SessionOperation,
                                deviceKey: [UInt8]) throws(SetupRejection) {
        guard principal.allows(DuoStepRunner.scopeName(operation)) else { throw SetupRejection(.forbidden) }
        if let binding = principal.deviceBinding, binding != deviceKey { throw SetupRejection(.forbidden) }
    }

    /// Rule 3, with the owner the store recorded for the key (nil: a key the node does not know yet).
    static func checkOwner(_ owner: String?, principal: Principal) throws(SetupRejection) {
        if let owner, owner != principal.subject { throw SetupRejection(.forbidden) }
    }
}
