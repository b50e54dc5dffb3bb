import MPCCrypto
import MPCProtocols

/// A DKLs23 presigning run (`dkls23.md` §13.4) by two signers along a soft path: rounds 1–2 of signing
/// (``DKLsPresigningRounds``), ending with this party's presignature (no message yet).
package struct DKLsPresignRun: SessionRun {
    package static let receivableTags: Set<UInt16> = DKLsPresigningRounds.receivableTags
    package private(set) var progress: RunProgress<SessionPresignature>
    private var rounds: DKLsPresigningRounds

    /// Presigning with `keyshare` by `signers` along the soft `path`.
    package init(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                 path: DerivationPath) throws(ProtocolError) {
        rounds = try DKLsPresigningRounds(keyshare: keyshare, signers: signers, instanceID: instanceID,
                                          setupHash: setupHash, path: path)
        progress = RunProgress(local: keyshare.partyIndex, participants: signers)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try rounds.start(&progress, using: &rng)
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch try rounds.advance(messages, &progress, using: &rng) {
        case .send(let out):
            return out
        case .presignature(let presignature):
            progress.finish(.ecdsa(presignature))
            return []
        }
    }
}
