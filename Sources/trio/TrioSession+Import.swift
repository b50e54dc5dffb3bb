import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

extension TrioSession {
    /// Imports an existing private key into a 2-of-3 sharing with nodes A and B (DKG import mode, the
    /// app is the importer); afterwards no party holds the whole key. ECDSA: `privateKey` is the
    /// 32-byte big-endian secp256k1 scalar; EdDSA: the 32-byte RFC 8032 seed. `rootChainCode` is 32
    /// bytes. Staged, committed at both nodes (which refuse a key id they hold: `keyAlreadyExists`),
    /// then promoted. The caller should erase its copy of the private key afterwards.
    public func `import`(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        guard privateKey.count == 32, rootChainCode.count == 32 else {
            throw .invalidInput(reason: "private key and chain code must be 32 bytes each")
        }
        let chainCode = [UInt8](rootChainCode)
        let key = try SessionProtocolMachine.ImportedKey(algorithm: algorithm, privateKey: [UInt8](privateKey))
        let keyID = try key.keyID(), publicKeyBytes = try key.publicKeyBytes()
        let makeRun: @Sendable ([UInt8], [UInt8], [UInt8], inout any RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> = {
            instanceID, setupHash, groupID, rng throws(ProtocolError) in
            try SessionProtocolMachine.importKey(key, chainCode: chainCode, local: 0, mode: .trio, instanceID: instanceID,
                                                 setupHash: setupHash, groupID: groupID, using: &rng)
        }
        do throws(SilentShardError) {
            return try await step(.import, action: transport.actions.import, existing: nil, participants: [0, 1, 2]) { setup in
                setup.keyID = keyID
                setup.publicKey = publicKeyBytes
                setup.chainCode = chainCode
            } body: { channel, link throws(SilentShardError) in
                // The DKG's import mode shares exactly the given public key, whose id `keyID` is.
                let keyshare = try await runProtocol(channel: &channel, link: link, makeRun)
                return try await commit(keyshare, channel: &channel, link: link)
            }
        } catch {
            return try await resolveInDoubt(error, previous: nil)
        }
    }
}
