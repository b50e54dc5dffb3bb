import Foundation

extension SilentShardError {
    /// The error's case name, without its payload (`timeout`, `keyBusy`, `network.connectionLost`,
    /// `rejected.KEY_BUSY`): stable, short and free of any detail, for logs and metrics.
    public var kind: String {
        switch self {
        case .malformedMessage: return "malformedMessage"
        case .protocolViolation: return "protocolViolation"
        case .messageAuthenticationFailed: return "messageAuthenticationFailed"
        case .abortProtocol: return "abortProtocol"
        case .abortProtocolAndBanParty: return "abortProtocolAndBanParty"
        case .signatureFailed: return "signatureFailed"
        case .unsupportedVersion: return "unsupportedVersion"
        case .timeout: return "timeout"
        case .cloudVerificationFailed: return "cloudVerificationFailed"
        case .authenticationFailed: return "authenticationFailed"
        case .authorizationDenied: return "authorizationDenied"
        case .deviceNotRegistered: return "deviceNotRegistered"
        case .clockSkew: return "clockSkew"
        case .replayDetected: return "replayDetected"
        case .partyBanned: return "partyBanned"
        case .deviceBanned: return "deviceBanned"
        case .rateLimited: return "rateLimited"
        case .keyNotFound: return "keyNotFound"
        case .keyRetired: return "keyRetired"
        case .keyAlreadyExists: return "keyAlreadyExists"
        case .staleKeyshare: return "staleKeyshare"
        case .nodeBehind: return "nodeBehind"
        case .keyBusy: return "keyBusy"
        case .reconcileRequired: return "reconcileRequired"
        case .reconcileConflict: return "reconcileConflict"
        case .abortedKeyshare: return "abortedKeyshare"
        case .staleBackup: return "staleBackup"
        case .invalidInput: return "invalidInput"
        case .invalidKeyshare: return "invalidKeyshare"
        case .invalidConfiguration: return "invalidConfiguration"
        case .unsupportedOperation: return "unsupportedOperation"
        case .policyDenied: return "policyDenied"
        case .peerUnavailable: return "peerUnavailable"
        case .presignatureNotFound: return "presignatureNotFound"
        case .presignatureConsumed: return "presignatureConsumed"
        case .presignatureExpired: return "presignatureExpired"
        case .serviceUnavailable: return "serviceUnavailable"
        case .cancelled: return "cancelled"
        case .rejected(_, let name, _, _): return "rejected." + name
        case .network(let error): return "network." + error.kind
        case .storage: return "storage"
        }
    }
}

extension NetworkError {
    /// The case name, without its payload.
    public var kind: String {
        switch self {
        case .invalidURL: return "invalidURL"
        case .connectionRefused: return "connectionRefused"
        case .connectionFailed: return "connectionFailed"
        case .tlsFailure: return "tlsFailure"
        case .handshakeRejected: return "handshakeRejected"
        case .subprotocolMismatch: return "subprotocolMismatch"
        case .invalidHandshake: return "invalidHandshake"
        case .closedByPeer: return "closedByPeer"
        case .connectionLost: return "connectionLost"
        case .protocolViolation: return "protocolViolation"
        case .timeout: return "timeout"
        case .messageTooLarge: return "messageTooLarge"
        case .notConnected: return "notConnected"
        case .httpStatus: return "httpStatus"
        case .postRequestUnsupported: return "postRequestUnsupported"
        case .tokenUnavailable: return "tokenUnavailable"
        }
    }
}
