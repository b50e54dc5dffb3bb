import MPCCrypto
import MPCProtocols

/// A DKLs23 DKG run (`dkls23.md` §12): keygen, refresh, recovery (a refresh by some holders) and import
/// share one engine, chosen by the parameters' mode. Three rounds, then the keyshare.
package struct DKLsDKGRun: SessionRun {
    private enum State: Sendable {
        case ready(DKLsDKG.Parameters)
        case round1(DKLsDKG.Round1State)
        case round2(DKLsDKG.Round2State)
        case round3(DKLsDKG.Round3State)
        case finished
    }

    package static let receivableTags: Set<UInt16> = [DKLsTag.dkgRound1Broadcast, DKLsTag.dkgRound1Direct,
                                                      DKLsTag.dkgRound2Broadcast, DKLsTag.dkgRound2Direct,
                                                      DKLsTag.dkgRound3Broadcast]
    package private(set) var progress: RunProgress<Keyshare>
    private var state: State
    private var label: KeyshareLabel

    private init(_ parameters: DKLsDKG.Parameters, label: KeyshareLabel) {
        progress = RunProgress(local: parameters.partyIndex, participants: (0..<parameters.partyCount).map { PartyIndex($0) })
        state = .ready(parameters)
        self.label = label
    }

    private init(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID, setupHash: SetupHash,
                 mode: DKLsDKG.Mode, label: KeyshareLabel) throws(ProtocolError) {
        self.init(try DKLsDKG.Parameters(partyCount: partyCount, threshold: threshold, partyIndex: local,
                                         instanceId: instanceID.bytes, setupHash: setupHash.bytes, mode: mode), label: label)
    }

    /// Keygen among `partyCount` parties with threshold `threshold`. `groupID` is recorded in the
    /// resulting `Keyshare` (trio).
    package static func keygen(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                               setupHash: SetupHash, mode: Keyshare.Mode, groupID: [UInt8]?) throws(ProtocolError) -> Self {
        try Self(local: local, partyCount: partyCount, threshold: threshold, instanceID: instanceID, setupHash: setupHash,
                 mode: .keygen, label: KeyshareLabel(mode: mode, groupID: groupID))
    }

    /// Refresh of `current` with every party a holder (same key, new shares).
    package static func refresh(_ current: DKLsKeyshare, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                setupHash: SetupHash, mode: Keyshare.Mode, groupID: [UInt8]?) throws(ProtocolError) -> Self {
        let all = (0..<partyCount).map { PartyIndex($0) }
        return try Self(local: current.partyIndex, partyCount: partyCount, threshold: threshold, instanceID: instanceID,
                        setupHash: setupHash,
                        mode: .refresh(holders: all, keyshare: current, expectedPublicKey: current.publicKey),
                        label: KeyshareLabel(mode: mode, groupID: groupID))
    }

    /// Recovery (`dkls23.md` §12.6): a refresh whose holders are `holders`; a party outside them passes
    /// `current` = nil (it lost its share) and receives the PKI from every holder (byte-identical copies
    /// required), and every party checks that the key is `expectedPublicKey`.
    package static func recover(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                setupHash: SetupHash, holders: [PartyIndex], current: DKLsKeyshare?,
                                expectedPublicKey: Secp256k1.Point, mode: Keyshare.Mode,
                                groupID: [UInt8]?) throws(ProtocolError) -> Self {
        try Self(local: local, partyCount: partyCount, threshold: threshold, instanceID: instanceID, setupHash: setupHash,
                 mode: .refresh(holders: holders, keyshare: current, expectedPublicKey: expectedPublicKey),
                 label: KeyshareLabel(mode: mode, groupID: groupID))
    }

    /// Import among `partyCount` parties: the app (party 0) is the importer and alone passes the private
    /// key; the result is a fresh sharing of that key.
    package static func importKey(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                  setupHash: SetupHash, publicKey: Secp256k1.Point, chainCode: ChainCode,
                                  privateKey: Secp256k1.Scalar?, mode: Keyshare.Mode,
                                  groupID: [UInt8]?) throws(ProtocolError) -> Self {
        try Self(local: local, partyCount: partyCount, threshold: threshold, instanceID: instanceID, setupHash: setupHash,
                 mode: .importKey(importer: 0, publicKey: publicKey, chainCode: chainCode.bytes, privateKey: privateKey),
                 label: KeyshareLabel(mode: mode, groupID: groupID))
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let parameters) = state else { throw .invalidInput(.invalidParameters) }
        let (next, out) = try DKLsDKG.start(parameters, using: &rng)
        state = .round1(next)
        progress.expect([DKLsTag.dkgRound1Broadcast, DKLsTag.dkgRound1Direct])
        return out
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch state {
        case .round1(let round1):
            let (next, out) = try round1.round2(messages, using: &rng)
            state = .round2(next)
            progress.expect([DKLsTag.dkgRound2Broadcast, DKLsTag.dkgRound2Direct])
            return out
        case .round2(let round2):
            let (next, out) = try round2.round3(messages, using: &rng)
            state = .round3(next)
            progress.expect([DKLsTag.dkgRound3Broadcast])
            return out
        case .round3(let round3):
            let keyshare = try label.keyshare(try round3.finish(messages))
            state = .finished
            progress.finish(keyshare)
            return []
        case .ready, .finished:
            throw .invalidInput(.invalidParameters)
        }
    }

    package mutating func recordGroup(_ group: [UInt8]) { label.groupID = group }
}
