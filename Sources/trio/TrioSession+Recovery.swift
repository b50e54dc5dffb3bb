import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Trio recovery (`specs/session.md` §6.4, §5.1; `dkls23.md` §12.6): the app lost its share; nodes A
/// and B are the holders H = {1, 2} and re-share the same key to all three parties. Each holder sends
/// the app the public key information (PKI) in its round-1 P2P frame; the app requires both copies to
/// be byte-identical and the key to equal `keysharePublicKey`, so a lying A cannot substitute a key.
/// All three shares are new (the old app share is useless with them), committed as in §7.2.
extension TrioSession {
    /// Recovers the app's share of the key `keysharePublicKey` (ECDSA: 33-byte compressed secp256k1)
    /// with both nodes, using the registered device key. `groupId` (16 bytes), when known, pins the node
    /// group as a keyshare would; without it the group of the nodes' certificates is taken (both must
    /// agree). Returns the new app keyshare (same key id and public key, new generation), committed.
    public func recovery(keysharePublicKey: Data, groupId: Data? = nil) async throws(SilentShardError) -> Keyshare {
        guard algorithm == .ecdsa else { throw .unsupportedOperation }
        guard let point = try? Secp256k1.Point(compressed: [UInt8](keysharePublicKey)),
              let keyIDBytes = try? DKLsDKG.keyId(for: point)
        else { throw .invalidInput(reason: "keysharePublicKey must be a compressed secp256k1 point") }
        if let groupId, groupId.count != 16 { throw .invalidInput(reason: "groupId must be 16 bytes") }
        let keyId = Hex.encode(keyIDBytes)
        let holders: [PartyIndex] = [1, 2]
        do throws(SilentShardError) {
            let result = try await step(.recover, action: transport.actions.recover, existing: nil, participants: [0, 1, 2],
                                        presign: nil, keyIdParam: keyId, groupID: groupId.map { [UInt8]($0) }) { setup in
                setup.keyID = keyIDBytes
                setup.publicKey = [UInt8](keysharePublicKey)
                setup.holders = PartySet(holders).encoded
            } machine: { instanceID, setupHash, group throws(ProtocolError) in
                try SessionProtocolMachine.dklsRecover(local: 0, partyCount: 3, threshold: 2, instanceID: instanceID,
                                                       setupHash: setupHash, holders: holders, current: nil,
                                                       expectedPublicKey: point, mode: .trio, groupID: group)
            }
            guard case .keyshare(let keyshare)? = result, keyshare.keyId == keyId, keyshare.publicKey == keysharePublicKey
            else { throw .invalidInput(reason: "unexpected result") }
            return keyshare
        } catch {
            return try await resolveInDoubt(error, previous: nil)
        }
    }
}
