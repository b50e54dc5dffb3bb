import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Presignatures (`docs/protocol/session.md` §8; ECDSA, `dkls23.md` §13.4): preSign over the WebSocket with
/// one node X (stored there, STORED), the finish later over one HTTP POST (FINAL_REQUEST →
/// FINAL_RESPONSE, end-to-end encrypted between the app and X with the preSignFinal keys).
extension TrioSession {
    /// Presigns with node A (default) or B along the soft `chainPath`: rounds 1–2 of DKLs23 signing
    /// now, so that `preSignatureFinal` needs one POST. X stores its half (bound to key id,
    /// generation, signer set, path) before it answers STORED. ECDSA only.
    /// - Parameter ttl: requested lifetime in seconds (the node caps it; default 24 h).
    public func preSignature(keyshare: Keyshare, chainPath: String = "m", signer: TrioSigner = .nodeA,
                             ttl: UInt32? = nil) async throws(SilentShardError) -> PreSignature {
        try await core.observed("preSign", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await makePreSignature(keyshare: keyshare, chainPath: chainPath, signer: signer, ttl: ttl)
        }
    }

    private func makePreSignature(keyshare: Keyshare, chainPath: String, signer: TrioSigner,
                             ttl: UInt32?) async throws(SilentShardError) -> PreSignature {
        try check(keyshare)
        let path = try AppSession.softPath(chainPath)
        try await core.settleIfStaged(keyshare)
        let signers: [PartyIndex] = [0, signer.index]
        let presign = try await core.step(.preSign, action: actions.preSign, existing: keyshare,
                                     participants: signers) { setup in
            setup.keyID = keyshare.keyID
            setup.gen = keyshare.gen
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.presignTTL = ttl
        } body: { channel, link throws(SilentShardError) in
            let presignature = try await core.runProtocol(channel: &channel, link: link) { instanceID, setupHash, _, rng throws(ProtocolError) in
                switch keyshare.algorithm {
                case .ecdsa:
                    guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                    return try SessionProtocolMachine.dklsPresign(keyshare: share, signers: signers, instanceID: instanceID,
                                                                  setupHash: setupHash, path: path)
                case .eddsa:
                    guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                    return try SessionProtocolMachine.frostPresign(keyshare: share, signers: signers, using: &rng)
                }
            }
            // X stores its half before it answers STORED (§7.5).
            return try await core.aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
                let (stored, keys) = try await awaitStored(keyID: keyshare.keyID, gen: keyshare.gen,
                                                           signer: signer.index, channel: &channel, read: link.read)
                return PresignStep(presignature: presignature, stored: stored, keys: keys)
            }
        }
        let (stored, keys) = (presign.stored, presign.keys)
        let presignature = try Self.preSignature(of: presign.presignature, stored: stored, keys: keys, keyshare: keyshare,
                                                 path: path, chainPath: chainPath, signer: signer)
        // Kept sealed in storage before it is handed out, so it survives a restart (a failure here leaves
        // only X's half, which expires).
        try await core.presignatures.add(try presignature.readyRecord(keyshare: keyshare))
        return presignature
    }

    private static func preSignature(of result: SessionPresignature, stored: StoredPayload, keys: PreSignFinalKeys,
                                     keyshare: Keyshare, path: DerivationPath, chainPath: String,
                                     signer: TrioSigner) throws(SilentShardError) -> PreSignature {
        switch result {
        case .eddsa(let frost):
            guard let share = try? keyshare.frostKeyshare(), let bytes = try? frost.presignature.serialized(),
                  let derivation = try? FROST.Derivation(publicKey: share.publicKey, chainCode: share.chainCode,
                                                         path: path.indices)
            else { throw .invalidInput(reason: "preSign ended without a presignature") }
            return PreSignature(id: stored.presigID.bytes, keyId: keyshare.keyId, generation: stored.gen.bytes, signer: signer,
                                chainPath: chainPath, derivedPublicKey: derivation.publicKey.bytes,
                                expiresAt: Date(timeIntervalSince1970: TimeInterval(stored.expiresAt) / 1000),
                                algorithm: .eddsa,
                                secrets: .init(presignature: bytes, finalKeys: keys, frostKeyshare: share,
                                               peerRound1: frost.peerRound1))
        case .ecdsa(let presignature):
            guard let bytes = try? presignature.serialized(), let derived = try? presignature.derivedKey.compressed()
            else { throw .invalidInput(reason: "preSign ended without a presignature") }
            return PreSignature(id: stored.presigID.bytes, keyId: keyshare.keyId, generation: stored.gen.bytes, signer: signer,
                                chainPath: chainPath, derivedPublicKey: derived,
                                expiresAt: Date(timeIntervalSince1970: TimeInterval(stored.expiresAt) / 1000),
                                algorithm: .ecdsa, secrets: .init(presignature: bytes, finalKeys: keys))
        }
    }

    /// After the presignature: X's STORED (presig_id = this session's instance id, the key id and
    /// generation of the SETUP), and the preSignFinal keys shared with X.
    func awaitStored(keyID: KeyID, gen: Generation, signer: PartyIndex, channel: inout PartyFrameChannel,
                     read: SessionDriver.Read) async throws(SilentShardError) -> (StoredPayload, PreSignFinalKeys) {
        let frame = try await SessionDriver.awaitControl(.stored, from: signer, channel: &channel, read: read)
        guard let stored = try? StoredPayload(bytes: frame.payload), stored.presigID == channel.instanceID,
              stored.keyID == keyID, stored.gen == gen
        else { throw .protocolViolation(party: .node(signer)) }
        let keys: PreSignFinalKeys?
        do { keys = try channel.receiver.preSignFinalKeys(with: signer) } catch { throw SilentShardError(error) }
        guard let keys else { throw .protocolViolation(party: .node(signer)) }
        return (stored, keys)
    }
}
