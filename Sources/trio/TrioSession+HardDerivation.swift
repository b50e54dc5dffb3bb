import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

extension TrioSession {
    /// Derives a hard child key of `keyshare` along `path` (e.g. "m/44'/0'/1") with nodes A and B
    /// (ECDSA only; `docs/protocol/dkls23.md` §15, session.md §5.1: all three parties take part so nobody is
    /// left without a share of the child). The child is a new key (new key id) with its own record;
    /// it is staged, committed at both nodes and promoted like a keygen. The same path always gives the
    /// same child.
    ///
    /// - Note: not BIP32 hardened derivation: every participant learns the tweak between parent and
    ///   child, so exporting the child is equivalent to exporting the parent.
    public func hardDerivation(keyshare: Keyshare, path: String) async throws(SilentShardError) -> Keyshare {
        try await core.observed(.hardDerivation, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await deriveHardChild(keyshare: keyshare, path: path)
        }
    }

    private func deriveHardChild(keyshare: Keyshare, path: String) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        guard keyshare.algorithm == .ecdsa else { throw .unsupportedOperation }
        let derivationPath: DerivationPath
        do { derivationPath = try DerivationPath(path, allowHardened: true) } catch { throw .invalidInput(reason: "invalid path") }
        guard !derivationPath.indices.isEmpty else { throw .invalidInput(reason: "empty path") }
        try await core.settleIfStaged(keyshare)
        return try await core.retryingAfterReconcile(keyshare) { () throws(SilentShardError) in
            try await hardDerivationStep(keyshare, path: derivationPath)
        }
    }

    private func hardDerivationStep(_ keyshare: Keyshare, path derivationPath: DerivationPath) async throws(SilentShardError) -> Keyshare {
        do throws(SilentShardError) {
            return try await core.step(.hardDerivation, action: actions.hardDerivation, existing: keyshare,
                                  participants: [0, 1, 2]) { setup in
                setup.keyID = keyshare.keyID
                setup.gen = keyshare.gen
                setup.path = DerivationPathBytes(indices: derivationPath.indices).encoded
            } body: { channel, link throws(SilentShardError) in
                let child = try await core.runProtocol(channel: &channel, link: link) { instanceID, setupHash, groupID, _ throws(ProtocolError) in
                    guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
                    return try DKLsHardDerivationRun(keyshare: share, participants: [0, 1, 2], instanceID: instanceID,
                                                     setupHash: setupHash, path: derivationPath, mode: .trio, groupID: groupID)
                }
                return try await core.commit(child, channel: &channel, link: link)
            }
        } catch {
            return try await core.resolveInDoubt(error, previous: nil)
        }
    }
}
