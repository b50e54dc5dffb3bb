import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Trio recovery (`docs/protocol/session.md` §6.4, §5.1; `dkls23.md` §12.6): the app lost its share; nodes A
/// and B are the holders H = {1, 2} and re-share the same key to all three parties. Each holder sends
/// the app the public key information (PKI) in its round-1 P2P frame; the app requires both copies to
/// be byte-identical and the key to equal `keysharePublicKey`, so a lying A cannot substitute a key.
/// All three shares are new (the old app share is useless with them), committed as in session.md §7.2.
/// EdDSA (FROST): A and B repair the app's share (δ between them, then σ ‖ PKI to the app, whose two PKI
/// copies must be byte-identical with the key `keysharePublicKey`) and all three refresh in the same
/// session (the SHOULD-refresh of session.md §6.4), so the result is a new generation at every party.
extension TrioSession {
    /// Recovers the app's share of the key `keysharePublicKey` (ECDSA: 33-byte compressed secp256k1;
    /// EdDSA: 32-byte Ed25519 public key)
    /// with both nodes, using the registered device key. `groupId` (16 bytes), when known, pins the node
    /// group as a keyshare would; without it the group of the nodes' certificates is taken (both must
    /// agree). Returns the new app keyshare (same key id and public key, new generation), committed.
    public func recovery(keysharePublicKey: Data, groupId: Data? = nil) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.recover, keyId: nil) { () throws(SilentShardError) in
            try await recover(keysharePublicKey: keysharePublicKey, groupId: groupId)
        }
    }

    private func recover(keysharePublicKey: Data, groupId: Data?) async throws(SilentShardError) -> Keyshare {
        let keyID: KeyID
        let makeRun: @Sendable (InstanceID, SetupHash, [UInt8]?, inout any RandomNumberGenerator) throws(ProtocolError) -> any SessionRun<Keyshare>
        let holders: [PartyIndex] = [1, 2]
        switch algorithm {
        case .ecdsa:
            guard let point = try? Secp256k1.Point(compressed: [UInt8](keysharePublicKey)),
                  let bytes = try? DKLsDKG.keyId(for: point), let id = KeyID(bytes)
            else { throw .invalidInput(reason: "keysharePublicKey must be a compressed secp256k1 point") }
            keyID = id
            makeRun = { instanceID, setupHash, group, _ throws(ProtocolError) in
                try DKLsDKGRun.recover(local: 0, partyCount: 3, threshold: 2, instanceID: instanceID, setupHash: setupHash,
                                       holders: holders, current: nil, expectedPublicKey: point, mode: .trio, groupID: group)
            }
        case .eddsa:
            guard let point = try? FROST.Point(bytes: [UInt8](keysharePublicKey)) else {
                throw .invalidInput(reason: "keysharePublicKey must be a 32-byte Ed25519 public key")
            }
            guard let id = KeyID(FROST.keyId(for: point)) else { throw .invalidInput(reason: "keysharePublicKey") }
            keyID = id
            makeRun = { instanceID, _, group, rng throws(ProtocolError) in
                try FROSTRecoverRun(local: 0, partyCount: 3, threshold: 2, instanceID: instanceID, helpers: holders,
                                    current: nil, expectedPublicKey: point, mode: .trio, groupID: group, using: &rng)
            }
        }
        if let groupId, groupId.count != 16 { throw .invalidInput(reason: "groupId must be 16 bytes") }
        let keyId = keyID.hex
        do throws(SilentShardError) {
            return try await core.step(.recover, action: actions.recover, existing: nil, participants: [0, 1, 2],
                                  keyIdParam: keyId, groupID: groupId.map { [UInt8]($0) }) { setup in
                setup.keyID = keyID
                setup.publicKey = [UInt8](keysharePublicKey)
                setup.holders = PartySet(holders).encoded
            } body: { channel, link throws(SilentShardError) in
                // The machine checks the recovered key is `keysharePublicKey` (both holders' PKI copies).
                let keyshare = try await core.runProtocol(channel: &channel, link: link, makeRun)
                return try await core.commit(keyshare, channel: &channel, link: link)
            }
        } catch {
            return try await core.resolveInDoubt(error, previous: nil)
        }
    }
}
