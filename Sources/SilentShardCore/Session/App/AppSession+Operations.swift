import Foundation
import MPCCrypto
import MPCProtocols

/// The operations every mode has (`docs/protocol/session.md` §5): one body each for duo and trio.
extension AppSession {
    /// Generates a new key with the nodes. The keyshare (trio: with the nodes' group id) is staged in
    /// storage, committed at the nodes, then promoted; it is returned only after every node confirmed.
    package func keygen() async throws(SilentShardError) -> Keyshare {
        do { return try await keygenStep() } catch { return try await resolveInDoubt(error, previous: nil) }
    }

    private func keygenStep() async throws(SilentShardError) -> Keyshare {
        try await step(.keygen, action: actions.keygen(), existing: nil, participants: allParties) { _ in
        } body: { channel, link throws(SilentShardError) in
            let keyshare = try await runProtocol(channel: &channel, link: link) {
                [algorithm, mode] instanceID, setupHash, groupID, rng throws(ProtocolError) in
                try SessionRuns.keygen(algorithm, local: 0, mode: mode, instanceID: instanceID, setupHash: setupHash,
                                                  groupID: groupID, using: &rng)
            }
            return try await commit(keyshare, channel: &channel, link: link)
        }
    }

    /// Refreshes the shares of `keyshare`'s key at every party (same public key, new shares and
    /// generation). Staged, committed at the nodes, then promoted; the old share stays current until then.
    package func refresh(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        try await settleIfStaged(keyshare)
        return try await retryingAfterReconcile(keyshare) { () throws(SilentShardError) in
            do throws(SilentShardError) { return try await refreshStep(keyshare) } catch {
                return try await resolveInDoubt(error, previous: keyshare)
            }
        }
    }

    private func refreshStep(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try await step(.refresh, action: actions.refresh(), existing: keyshare, participants: allParties) { setup in
            setup.keyID = keyshare.keyID
            setup.gen = keyshare.gen
        } body: { channel, link throws(SilentShardError) in
            let refreshed = try await runProtocol(channel: &channel, link: link) {
                instanceID, setupHash, groupID, rng throws(ProtocolError) in
                try SessionRuns.refresh(keyshare, instanceID: instanceID, setupHash: setupHash, groupID: groupID, using: &rng)
            }
            return try await commit(refreshed, channel: &channel, link: link)
        }
    }

    /// Imports an existing private key (DKG import mode, the app is the importer); afterwards no party
    /// holds the whole key. ECDSA: `privateKey` is the 32-byte big-endian secp256k1 scalar; EdDSA: the
    /// 32-byte RFC 8032 seed. `rootChainCode` is 32 bytes. Staged, committed at the nodes (which refuse
    /// a key id they hold: `keyAlreadyExists`), then promoted.
    package func importKey(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        guard privateKey.count == 32, let chainCode = ChainCode([UInt8](rootChainCode)) else {
            throw .invalidInput(reason: "private key and chain code must be 32 bytes each")
        }
        let key = try SessionRuns.ImportedKey(algorithm: algorithm, privateKey: [UInt8](privateKey))
        let keyID = try key.keyID(), publicKey = try key.publicKeyBytes()
        do throws(SilentShardError) {
            return try await step(.import, action: actions.importKey(), existing: nil, participants: allParties) { setup in
                setup.keyID = keyID
                setup.publicKey = publicKey
                setup.chainCode = chainCode
            } body: { channel, link throws(SilentShardError) in
                let keyshare = try await runProtocol(channel: &channel, link: link) {
                    [mode] instanceID, setupHash, groupID, rng throws(ProtocolError) in
                    try SessionRuns.importKey(key, chainCode: chainCode, local: 0, mode: mode, instanceID: instanceID,
                                          setupHash: setupHash, groupID: groupID, using: &rng)
                }
                // The DKG's import mode shares exactly the given public key, whose id `keyID` is.
                try await aborting(channel: &channel, link: link) { (_: inout PartyFrameChannel) throws(SilentShardError) in
                    guard keyshare.keyID == keyID else { throw .abortProtocol(party: nil) }
                }
                return try await commit(keyshare, channel: &channel, link: link)
            }
        } catch {
            return try await resolveInDoubt(error, previous: nil)
        }
    }

    /// Signs `message` with the co-signers `signers` ({0, node}). ECDSA: `message` is exactly the
    /// 32-byte hash; EdDSA: the message itself (≤ 32,768 bytes). `chainPath` is a soft BIP32 path
    /// ("m" or "m/1/2"). The signature is verified under the derived public key before it is returned.
    package func signature(keyshare: Keyshare, message: Data, chainPath: String,
                           signers: [PartyIndex]) async throws(SilentShardError) -> Signature {
        try check(keyshare)
        let messageBytes = [UInt8](message)
        try Self.checkMessage(messageBytes, algorithm: keyshare.algorithm)
        let path = try Self.softPath(chainPath)
        try await settleIfStaged(keyshare)
        let signature = try await step(.sign, action: actions.sign(), existing: keyshare, participants: signers) { setup in
            setup.keyID = keyshare.keyID
            setup.gen = keyshare.gen
            setup.path = DerivationPathBytes(indices: path.indices).encoded
            setup.message = messageBytes
        } body: { channel, link throws(SilentShardError) in
            let signature = try await runProtocol(channel: &channel, link: link) { instanceID, setupHash, _, rng throws(ProtocolError) in
                try SessionRuns.sign(keyshare, signers: signers, instanceID: instanceID, setupHash: setupHash, path: path,
                                     message: messageBytes, using: &rng)
            }
            // DONE confirms the signature to the signer (its audit); best effort.
            if let done = try? channel.control(.done, payload: signature.done.encoded) { try? await link.send([done]) }
            return signature
        }
        return try signature.signature()
    }

    /// ECDSA signs a 32-byte hash; EdDSA a message of at most 32,768 bytes.
    package static func checkMessage(_ message: [UInt8], algorithm: Keyshare.Algorithm) throws(SilentShardError) {
        switch algorithm {
        case .ecdsa:
            guard message.count == SessionConstants.ecdsaMessageByteCount else {
                throw .invalidInput(reason: "ECDSA message must be a 32-byte hash")
            }
        case .eddsa:
            guard message.count <= SessionConstants.maximumEdDSAMessageByteCount else {
                throw .invalidInput(reason: "EdDSA message longer than 32,768 bytes")
            }
        }
    }

    /// A soft BIP32 path ("m" or "m/1/2"); anything else is `invalidInput`.
    package static func softPath(_ chainPath: String) throws(SilentShardError) -> DerivationPath {
        do { return try DerivationPath(chainPath) } catch { throw .invalidInput(reason: "invalid chain path") }
    }
}
