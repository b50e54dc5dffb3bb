import Foundation
import MPCCrypto
import MPCProtocols

/// preSign at the app (`docs/protocol/session.md` §8; ECDSA `dkls23.md` §13.4; EdDSA FROST round 1), in
/// either mode: one step with node X (duo: the node; trio: A or B), X stores its half before it answers
/// STORED, and the app keeps its half sealed in storage before handing it out.
extension AppSession {
    /// Presigns `keyshare` with node `signer` along the soft `chainPath` and keeps the result in storage.
    package func preSign(keyshare: Keyshare, chainPath: String, signer: PartyIndex, ttl: UInt32?,
                         action: any NetworkAction) async throws(SilentShardError) -> PreSignature {
        try check(keyshare)
        let path = try AppSession.softPath(chainPath)
        try await settleIfStaged(keyshare)
        let signers: [PartyIndex] = [0, signer]
        let presign = try await step(.preSign, action: action, existing: keyshare, participants: signers) { setup in
            setup.keyID = keyshare.keyID
            setup.gen = keyshare.gen
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.presignTTL = ttl
        } body: { channel, link throws(SilentShardError) in
            let presignature = try await runProtocol(channel: &channel, link: link) { instanceID, setupHash, _, rng throws(ProtocolError) in
                try SessionRuns.presign(keyshare, signers: signers, instanceID: instanceID, setupHash: setupHash, path: path,
                                        using: &rng)
            }
            // X stores its half before it answers STORED (session.md §7.5).
            return try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
                let (stored, keys) = try await awaitStored(keyID: keyshare.keyID, gen: keyshare.gen,
                                                           signer: signer, channel: &channel, read: link.read)
                return PresignStep(presignature: presignature, stored: stored, keys: keys)
            }
        }
        let presignature = try Self.preSignature(of: presign, keyshare: keyshare, path: path, chainPath: chainPath,
                                                 signer: signer)
        // Kept sealed in storage before it is handed out, so it survives a restart (a failure here leaves
        // only X's half, which expires).
        try await presignatures.add(try presignature.readyRecord(keyshare: keyshare))
        return presignature
    }

    private static func preSignature(of step: PresignStep, keyshare: Keyshare, path: DerivationPath, chainPath: String,
                                     signer: PartyIndex) throws(SilentShardError) -> PreSignature {
        let (stored, keys) = (step.stored, step.keys)
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(stored.expiresAt) / 1000)
        switch step.presignature {
        case .eddsa(let frost):
            guard let share = try? keyshare.frostKeyshare(), let bytes = try? frost.presignature.serialized(),
                  let derivation = try? FROST.Derivation(publicKey: share.publicKey, chainCode: share.chainCode,
                                                         path: path.indices)
            else { throw .invalidInput(reason: "preSign ended without a presignature") }
            return PreSignature(id: stored.presigID.bytes, keyId: keyshare.keyId, generation: stored.gen.bytes,
                                mode: keyshare.mode == .duo ? .duo : .trio,
                                signerIndex: signer, chainPath: chainPath, derivedPublicKey: derivation.publicKey.bytes,
                                expiresAt: expiresAt, algorithm: .eddsa,
                                secrets: .init(presignature: bytes, finalKeys: keys, frostKeyshare: share,
                                               peerRound1: frost.peerRound1))
        case .ecdsa(let presignature):
            guard let bytes = try? presignature.serialized(), let derived = try? presignature.derivedKey.compressed()
            else { throw .invalidInput(reason: "preSign ended without a presignature") }
            return PreSignature(id: stored.presigID.bytes, keyId: keyshare.keyId, generation: stored.gen.bytes,
                                mode: keyshare.mode == .duo ? .duo : .trio,
                                signerIndex: signer, chainPath: chainPath, derivedPublicKey: derived, expiresAt: expiresAt,
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
