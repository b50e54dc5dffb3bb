import Foundation
import MPCCrypto
import SilentShardCore

/// One duo export request (`docs/protocol/session.md` §9.3), made by ``DuoSession/exportRequest(keyshare:chainPath:)``
/// and consumed by ``DuoSession/exportCombine(request:response:)``.
///
/// The app hands ``body`` to its backend, which POSTs it to the node at ``path`` (optionally with
/// `?params=` ``params``) with its own bearer credential (scope `export`) and `Content-Type:
/// application/octet-stream`, and relays the response body back unchanged. The backend learns
/// nothing: the share travels encrypted to a one-time X25519 key that never leaves this object.
///
/// Single use: the first combine takes the one-time private key out (whatever the outcome); a
/// second combine fails with `invalidInput`. `description`, `debugDescription` and reflection never
/// show the one-time key.
public final class DuoExportRequest: Sendable, SecretRedacting {
    /// The algorithm of the exported key.
    public let algorithm: Keyshare.Algorithm
    /// The key id (hex) being exported.
    public let keyId: String
    /// The soft path whose private key the combine returns ("m" = the root key).
    public let chainPath: String
    /// The POST body: exactly one SETUP frame (operation export, receiver = the node, no session
    /// keys), signed by the app's device key.
    public let body: Data
    /// The node route the backend POSTs to: `/v3/ecdsa/export` or `/v3/eddsa/export`.
    public let path: String
    /// The session's fresh instance id (32 bytes); also the request id in the node's replay store.
    public let instanceID: Data

    /// `instanceID`, typed.
    let sessionInstance: InstanceID
    /// The app's keyshare (to check the node's share against S_1 and the result against P).
    let keyshare: Keyshare
    /// Hs("setup"; header ‖ payload) of the SETUP in `body`.
    let setupHash: SetupHash
    /// The one-time X25519 private key; nil once a combine took it.
    private let oneTimeKey: LockedValue<X25519.PrivateKey?>

    init(keyshare: Keyshare, chainPath: String, body: Data, instanceID: InstanceID, setupHash: SetupHash,
         oneTimeKey: X25519.PrivateKey) {
        algorithm = keyshare.algorithm
        keyId = keyshare.keyId
        self.chainPath = chainPath
        self.body = body
        path = "/v3/\(keyshare.algorithm == .ecdsa ? "ecdsa" : "eddsa")/export"
        self.instanceID = Data(instanceID.bytes)
        sessionInstance = instanceID
        self.keyshare = keyshare
        self.setupHash = setupHash
        self.oneTimeKey = LockedValue(oneTimeKey)
    }

    /// The route's `params` (hex key id, session.md §2.1). The node accepts the export POST with or without it,
    /// and refuses it when it names another key.
    public var params: String { keyId }

    /// Whether a combine already used this request.
    public var isConsumed: Bool { oneTimeKey.withLock { $0 == nil } }

    /// Takes the one-time private key out (once).
    func consume() -> X25519.PrivateKey? {
        oneTimeKey.withLock { key in
            defer { key = nil }
            return key
        }
    }

    /// Public fields only.
    public var description: String {
        "DuoExportRequest(\(algorithm), key \(keyId), path \(chainPath), POST \(path), \(body.count)-byte body, "
            + "one-time key redacted\(isConsumed ? ", consumed" : ""))"
    }
}
