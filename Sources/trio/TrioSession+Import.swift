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
        let keyID: [UInt8], publicKeyBytes: [UInt8]
        let makeRun: @Sendable ([UInt8], [UInt8], [UInt8], inout any RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare>
        switch algorithm {
        case .ecdsa:
            guard let x = try? Secp256k1.Scalar(nonZeroBytes: [UInt8](privateKey)) else {
                throw .invalidInput(reason: "private key is not a valid secp256k1 scalar")
            }
            let point = Secp256k1.Point(base: x)
            guard let compressed = try? point.compressed(), let id = try? DKLsDKG.keyId(for: point) else {
                throw .invalidInput(reason: "private key")
            }
            keyID = id
            publicKeyBytes = compressed
            makeRun = { instanceID, setupHash, groupID, _ throws(ProtocolError) in
                try SessionProtocolMachine.dklsImport(local: 0, partyCount: 3, threshold: 2, instanceID: instanceID,
                                                      setupHash: setupHash, publicKey: point, chainCode: chainCode,
                                                      privateKey: x, mode: .trio, groupID: groupID)
            }
        case .eddsa:
            guard let x = try? FROST.secretScalar(fromSeed: [UInt8](privateKey)) else {
                throw .invalidInput(reason: "private key is not a 32-byte Ed25519 seed")
            }
            let point = FROST.Point(base: x)
            keyID = FROST.keyId(for: point)
            publicKeyBytes = point.bytes
            makeRun = { instanceID, _, groupID, rng throws(ProtocolError) in
                try SessionProtocolMachine.frostImport(local: 0, partyCount: 3, threshold: 2, instanceID: instanceID,
                                                       publicKey: point, chainCode: chainCode, secret: x, mode: .trio,
                                                       groupID: groupID, using: &rng)
            }
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
