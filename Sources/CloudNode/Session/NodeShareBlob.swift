import MPCCrypto
import SilentShardCore

/// What a node — duo or trio — stores as a share's bytes (sealed by `NodeShareStore`): the protocol keyshare bound
/// to the device key registered at keygen (session.md §9.2), so later sessions on the key can be refused with
/// DEVICE_NOT_REGISTERED. `"SSND" ‖ u8 version (1) ‖ u8 len ‖ device identity (type ‖ key) ‖ protocol
/// keyshare bytes`. Refresh carries the registration forward.
package struct NodeShareBlob: Sendable, SecretRedacting {
    private static let magic: [UInt8] = Array("SSND".utf8)
    /// The registered device key identity (`type ‖ public key`).
    package let deviceIdentity: [UInt8]
    /// The protocol keyshare (secret).
    package let protocolBytes: [UInt8]

    package init(deviceIdentity: [UInt8], protocolBytes: [UInt8]) {
        self.deviceIdentity = deviceIdentity
        self.protocolBytes = protocolBytes
    }

    /// Decodes `encoded`; malformed input throws, never traps: INTERNAL (the node's own record does not decode; the
    /// code every caller answered for it before, session.md §10).
    package init(bytes: [UInt8]) throws(SessionError) {
        guard bytes.count >= 6, Array(bytes[0..<4]) == Self.magic, bytes[4] == 1 else {
            throw .detected(.internalError, blamed: nil)
        }
        let length = Int(bytes[5])
        guard length > 0, bytes.count > 6 + length else { throw .detected(.internalError, blamed: nil) }
        deviceIdentity = Array(bytes[6..<(6 + length)])
        protocolBytes = Array(bytes[(6 + length)...])
    }

    /// The stored form.
    package var encoded: [UInt8] { Self.magic + [1, UInt8(clamping: deviceIdentity.count)] + deviceIdentity + protocolBytes }

    package var description: String { "NodeShareBlob(\(protocolBytes.count) secret bytes)" }
}
