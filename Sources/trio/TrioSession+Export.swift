import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Trio export (`docs/protocol/session.md` §5.1, §9.3; `dkls23.md` §16) over the WebSocket: all three parties,
/// E = {0, 1, 2}. The app sends a fresh one-time X25519 key in SETUP; nodes A and B each send their
/// share encrypted to it (P2P, B's through A, which sees only ciphertext); the app checks each share
/// against its public share, interpolates with its own share, checks x·G = P and sends DONE.
extension TrioSession {
    /// Exports the whole private key of `keyshare`'s key (root, path "m"). Both nodes must consent
    /// (each validates the device-signed SETUP and its own policy). The result is checked
    /// (`privateKey`·G = `publicKey` = the keyshare's public key) before it is returned.
    public func export(keyshare: Keyshare) async throws(SilentShardError) -> ExportedKey {
        try await core.observed(.export, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await exportKey(keyshare: keyshare)
        }
    }

    private func exportKey(keyshare: Keyshare) async throws(SilentShardError) -> ExportedKey {
        try check(keyshare)
        try await core.settleIfStaged(keyshare)
        let oneTimeKey = X25519.PrivateKey()
        let exported = try await core.step(.export, action: actions.export, existing: keyshare,
                                      participants: [0, 1, 2]) { setup in
            setup.keyID = keyshare.keyID
            setup.gen = keyshare.gen
            setup.exportKey = oneTimeKey.publicKey.bytes
        } body: { channel, link throws(SilentShardError) in
            let exported = try await core.runProtocol(channel: &channel, link: link) { instanceID, setupHash, _, _ throws(ProtocolError) in
                try SessionRuns.exportReceiving(keyshare: keyshare, participants: [0, 1, 2], oneTimeKey: oneTimeKey,
                                                instanceID: instanceID, setupHash: setupHash)
            }
            if let done = try? channel.control(.done, payload: DonePayload.none.encoded) { try? await link.send([done]) }
            return exported
        }
        // The machine builds the key from this keyshare's public key and checks x·G against it.
        guard exported.publicKey == keyshare.publicKey, exported.keyId == keyshare.keyId else {
            throw .invalidInput(reason: "export ended with another key")
        }
        return exported
    }
}
