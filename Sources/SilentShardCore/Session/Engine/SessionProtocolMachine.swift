import Foundation
import MPCCrypto
import MPCProtocols

/// One party's side of a protocol run in any mode (duo's two parties, trio's three-party DKG, or two
/// signers out of three) as a round machine: `start()` gives the first messages; then, whenever every
/// tag in `awaiting` has arrived from every party in `peers`, `advance` consumes them and gives the
/// next messages; `outcome` is set after the last round (`docs/protocol/dkls23.md` §17: "every round is all
/// parties send, all parties receive").
///
/// Constructors return a ``ProtocolRun`` typed by the operation's outcome. Randomness is the caller's
/// (`using:`): ``SessionDriver`` passes a generator from its ``SessionRandomness`` to every step. A value
/// type; secrets live in the protocol states, which redact their descriptions.
package struct SessionProtocolMachine: Sendable {
    private enum State: Sendable {
        case dklsDKGStart(DKLsDKG.Parameters)
        case dklsDKG1(DKLsDKG.Round1State)
        case dklsDKG2(DKLsDKG.Round2State)
        case dklsDKG3(DKLsDKG.Round3State)
        case dklsSignStart(DKLsSign.Parameters)
        case dklsSign1(DKLsSign.Round1State, DKLsKeyshare)
        case dklsSign2(DKLsSign.Round2State, DKLsKeyshare)
        case dklsSignFinish(DKLsSign.FinishState)
        case frostDKG(FROST.KeyGeneration, round: Int)
        case frostSign(FROST.SigningSession, round: Int)
        case frostPresign(FROST.Presignature)
        case dklsHardStart(DKLsHardDerivation.Parameters)
        case dklsHard(DKLsHardDerivation.State)
        case dklsExport(DKLsExport.Parameters, X25519.PrivateKey?)
        case frostExport(FROST.Export.Sealed.Parameters, X25519.PrivateKey?)
        case frostRepairHelper(FROST.RepairHelper, instanceID: InstanceID)
        case frostRepairRecipient(expected: FROST.Point, helpers: [PartyIndex], instanceID: InstanceID)
        case finished
    }

    /// This party's index.
    package let local: PartyIndex
    /// The other participants, ascending; every awaited tag must arrive from each of them.
    package let peers: [PartyIndex]
    private let messageHash: [UInt8]
    /// The mode recorded in a resulting keyshare (nil for runs that end in no keyshare: signing).
    private let keyshareMode: Keyshare.Mode?
    /// The trio group recorded in a resulting keyshare; a new trio key's group may be recorded after the
    /// first round (``recordGroup(_:)``): nothing the rounds send depends on it.
    private var groupID: [UInt8]?
    /// preSign: the run ends after round 2 with the presignature instead of a finish (dkls23.md §13.4).
    private var presignOnly = false
    private var state: State
    /// Protocol tags that must all arrive from every peer before the next `advance`; empty when done.
    package private(set) var awaiting: Set<UInt16> = []
    /// The parties every tag in `awaiting` must arrive from: all `peers` unless a round involves
    /// only some of them (FROST recovery's repair steps).
    package var awaitingSenders: [PartyIndex] { awaitingFrom ?? peers }
    private var awaitingFrom: [PartyIndex]?
    /// Every tag this run may receive (the frame state check, session.md §3.5 step 3).
    package let receivableTags: Set<UInt16>
    /// What the run ended with (read through the ``ProtocolRun`` that made the machine).
    package private(set) var outcome: ProtocolOutcome?
    /// Whether the run ended.
    package var isFinished: Bool { outcome != nil }

    /// Records the trio group of the keyshare this run ends with, once the nodes' certificates named it
    /// (a new trio key whose short first round travelled with the SETUP, `session.md` §5.2 flight F1).
    package mutating func recordGroup(_ group: [UInt8]) { groupID = group }

    private init(local: PartyIndex, participants: [PartyIndex], state: State, mode: Keyshare.Mode?, groupID: [UInt8]?,
                 messageHash: [UInt8] = [], receivable: Set<UInt16>) {
        self.local = local
        peers = participants.filter { $0 != local }.sorted()
        self.state = state
        self.messageHash = messageHash
        keyshareMode = mode
        self.groupID = groupID
        receivableTags = receivable
    }

    static let dklsDKGTags: Set<UInt16> = [DKLsTag.dkgRound1Broadcast, DKLsTag.dkgRound1Direct,
                                           DKLsTag.dkgRound2Broadcast, DKLsTag.dkgRound2Direct,
                                           DKLsTag.dkgRound3Broadcast]
    static let dklsSignTags: Set<UInt16> = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct,
                                            DKLsTag.signRound2Direct, DKLsTag.signFinish]
    static let dklsPresignTags: Set<UInt16> = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct,
                                               DKLsTag.signRound2Direct]
    static let frostDKGTags: Set<UInt16> = [FROST.MessageTag.dkgRound1.rawValue, FROST.MessageTag.dkgRound2.rawValue]
    static let frostRecoverTags: Set<UInt16> = frostDKGTags.union([FROST.MessageTag.repairStep1.rawValue,
                                                                   FROST.MessageTag.repairStep2.rawValue])
    static let frostSignTags: Set<UInt16> = [FROST.MessageTag.signRound1.rawValue, FROST.MessageTag.signRound2.rawValue]

    /// The protocol tags an operation's run may carry (known before the machine exists, e.g. while
    /// the app waits for ACCEPTs).
    package static func receivableTags(operation: SessionOperation, algorithm: SessionAlgorithm) -> Set<UInt16> {
        switch (operation, algorithm) {
        case (.keygen, .ecdsa), (.refresh, .ecdsa), (.import, .ecdsa), (.recover, .ecdsa): return dklsDKGTags
        case (.keygen, .eddsa), (.refresh, .eddsa), (.import, .eddsa): return frostDKGTags
        case (.recover, .eddsa): return frostRecoverTags
        case (.sign, .ecdsa): return dklsSignTags
        case (.preSign, .ecdsa): return dklsPresignTags
        case (.preSign, .eddsa): return [FROST.MessageTag.signRound1.rawValue]
        case (.export, .ecdsa): return [DKLsTag.exportShare]
        case (.export, .eddsa): return [FROST.MessageTag.exportShare.rawValue]
        case (.sign, .eddsa): return frostSignTags
        case (.hardDerivation, .ecdsa): return [DKLsTag.hardDerivation]
        default: return []
        }
    }

    /// DKLs23 keygen among `partyCount` parties with threshold `threshold`, or refresh of `current`
    /// with every party a holder. `groupID` is recorded in the resulting `Keyshare` (trio).
    package static func dklsDKG(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID, setupHash: SetupHash,
                               mode: Keyshare.Mode, groupID: [UInt8]?,
                               refreshing current: DKLsKeyshare? = nil) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let dkgMode: DKLsDKG.Mode
        let all = (0..<partyCount).map { PartyIndex($0) }
        if let current {
            dkgMode = .refresh(holders: all, keyshare: current, expectedPublicKey: current.publicKey)
        } else {
            dkgMode = .keygen
        }
        let parameters = try DKLsDKG.Parameters(partyCount: partyCount, threshold: threshold, partyIndex: local,
                                                instanceId: instanceID.bytes, setupHash: setupHash.bytes, mode: dkgMode)
        return ProtocolRun(SessionProtocolMachine(local: local, participants: all, state: .dklsDKGStart(parameters), mode: mode,
                                                  groupID: groupID, receivable: dklsDKGTags))
    }

    /// DKLs23 recovery (`dkls23.md` §12.6): a refresh whose holders are `holders`; a party outside them
    /// passes `current` = nil (it lost its share) and receives the PKI from every holder (byte-identical
    /// copies required), and every party checks that the key is `expectedPublicKey`.
    package static func dklsRecover(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                   setupHash: SetupHash, holders: [PartyIndex], current: DKLsKeyshare?,
                                   expectedPublicKey: Secp256k1.Point, mode: Keyshare.Mode,
                                   groupID: [UInt8]?) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let parameters = try DKLsDKG.Parameters(partyCount: partyCount, threshold: threshold, partyIndex: local,
                                                instanceId: instanceID.bytes, setupHash: setupHash.bytes,
                                                mode: .refresh(holders: holders, keyshare: current,
                                                               expectedPublicKey: expectedPublicKey))
        return ProtocolRun(SessionProtocolMachine(local: local, participants: (0..<partyCount).map { PartyIndex($0) },
                                                  state: .dklsDKGStart(parameters), mode: mode, groupID: groupID,
                                                  receivable: dklsDKGTags))
    }

    /// FROST recovery (`docs/protocol/session.md` §6.4 with the SHOULD-refresh; `docs/protocol/frost.md` §12.1): the
    /// holders (`current` set, H = `helpers`) repair the share of the party without one (`current` =
    /// nil), then all `partyCount` parties refresh. Flow: R1 δ between the holders (0x4102, P2P); R2
    /// each holder sends the recipient σ ‖ PKI (0x4202, P2P) and its refresh round 1; the recipient
    /// requires both PKI copies byte-identical with the key `expectedPublicKey`, checks σ's sum
    /// against its verifying share, then joins the refresh (round 1, round 2). The result is a new
    /// generation of the same key at every party.
    package static func frostRecover(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                    helpers: [PartyIndex], current: FROST.Keyshare?, expectedPublicKey: FROST.Point,
                                    mode: Keyshare.Mode, groupID: [UInt8]?,
                                    using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let all = (0..<partyCount).map { PartyIndex($0) }
        let sortedHelpers = helpers.sorted()
        guard let lost = all.first(where: { !sortedHelpers.contains($0) }), all.count == sortedHelpers.count + 1,
              sortedHelpers.count >= threshold
        else { throw .invalidInput(.invalidParameters) }
        if let current {
            guard current.party == local, current.publicKey == expectedPublicKey, Int(current.parties) == partyCount,
                  Int(current.threshold) == threshold, sortedHelpers.contains(local)
            else { throw .invalidInput(.invalidParameters) }
            let helper = try FROST.RepairHelper(keyshare: current, helpers: sortedHelpers, lost: lost, using: &rng)
            return ProtocolRun(SessionProtocolMachine(local: local, participants: all,
                                                      state: .frostRepairHelper(helper, instanceID: instanceID),
                                                      mode: mode, groupID: groupID, receivable: frostRecoverTags))
        }
        guard local == lost else { throw .invalidInput(.invalidParameters) }
        return ProtocolRun(SessionProtocolMachine(local: local, participants: all,
                                                  state: .frostRepairRecipient(expected: expectedPublicKey, helpers: sortedHelpers,
                                                                               instanceID: instanceID),
                                                  mode: mode, groupID: groupID, receivable: frostRecoverTags))
    }

    /// The public key information a FROST recovery holder sends with σ: `u8 t ‖ u8 n ‖ PK ‖ u8 len ‖
    /// gen ‖ chain code (32) ‖ Y_0 … Y_{n−1}`.
    static func frostPKI(_ share: FROST.Keyshare) -> [UInt8] {
        var out: [UInt8] = [share.threshold, share.parties] + share.publicKey.bytes
        out.append(UInt8(truncatingIfNeeded: share.generation.count))
        out += share.generation + share.chainCode
        for y in share.verifyingShares { out += y.bytes }
        return out
    }

    /// DKLs23 import among `partyCount` parties: the app (party 0) is the importer and alone passes
    /// the private key; the result is a fresh sharing of that key.
    package static func dklsImport(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID, setupHash: SetupHash,
                                  publicKey: Secp256k1.Point, chainCode: ChainCode, privateKey: Secp256k1.Scalar?,
                                  mode: Keyshare.Mode, groupID: [UInt8]?) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let parameters = try DKLsDKG.Parameters(partyCount: partyCount, threshold: threshold, partyIndex: local,
                                                instanceId: instanceID.bytes, setupHash: setupHash.bytes,
                                                mode: .importKey(importer: 0, publicKey: publicKey, chainCode: chainCode.bytes,
                                                                 privateKey: privateKey))
        return ProtocolRun(SessionProtocolMachine(local: local, participants: (0..<partyCount).map { PartyIndex($0) },
                                                  state: .dklsDKGStart(parameters), mode: mode, groupID: groupID,
                                                  receivable: dklsDKGTags))
    }

    /// FROST import (the app, party 0, is the importer and alone passes the secret scalar).
    package static func frostImport(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                   publicKey: FROST.Point, chainCode: ChainCode, secret: FROST.Scalar?,
                                   mode: Keyshare.Mode, groupID: [UInt8]?,
                                   using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        guard let t = UInt8(exactly: threshold), let n = UInt8(exactly: partyCount) else { throw .invalidInput(.invalidParameters) }
        let key = try FROST.ImportedKey(importer: 0, publicKey: publicKey, chainCode: chainCode.bytes, secret: secret)
        let machine = try FROST.KeyGeneration(party: local, threshold: t, parties: n, sessionId: instanceID.bytes,
                                              mode: .importKey(key), using: &rng)
        return ProtocolRun(SessionProtocolMachine(local: local, participants: (0..<partyCount).map { PartyIndex($0) },
                                                  state: .frostDKG(machine, round: 0), mode: mode, groupID: groupID,
                                                  receivable: frostDKGTags))
    }

    /// DKLs23 hard derivation (`dkls23.md` §15) of `keyshare` along `path` (hardened markers allowed)
    /// by `participants`: one broadcast round, then the child keyshare (a new key id).
    package static func dklsHardDerivation(keyshare: DKLsKeyshare, participants: [PartyIndex], instanceID: InstanceID,
                                          setupHash: SetupHash, path: DerivationPath, mode: Keyshare.Mode,
                                          groupID: [UInt8]?) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let parameters = try DKLsHardDerivation.Parameters(keyshare: keyshare, participants: participants, instanceId: instanceID.bytes,
                                                           setupHash: setupHash.bytes, path: path)
        return ProtocolRun(SessionProtocolMachine(local: keyshare.partyIndex, participants: participants,
                                                  state: .dklsHardStart(parameters), mode: mode, groupID: groupID,
                                                  receivable: [DKLsTag.hardDerivation]))
    }

    /// DKLs23 signing of a 32-byte hash by `signers` along a soft `path`.
    package static func dklsSign(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                                path: DerivationPath, messageHash: [UInt8]) throws(ProtocolError) -> ProtocolRun<SessionSignature> {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidParameters) }
        let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instanceID.bytes,
                                                 setupHash: setupHash.bytes, path: path)
        return ProtocolRun(SessionProtocolMachine(local: keyshare.partyIndex, participants: signers,
                                                  state: .dklsSignStart(parameters), mode: nil, groupID: nil,
                                                  messageHash: messageHash, receivable: dklsSignTags))
    }

    /// DKLs23 presigning (`dkls23.md` §13.4) by `signers` along a soft `path`: rounds 1–2 of signing,
    /// ending with `presignature` (no message yet).
    package static func dklsPresign(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                                   path: DerivationPath) throws(ProtocolError) -> ProtocolRun<SessionPresignature> {
        let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instanceID.bytes,
                                                 setupHash: setupHash.bytes, path: path)
        var machine = SessionProtocolMachine(local: keyshare.partyIndex, participants: signers,
                                             state: .dklsSignStart(parameters), mode: nil, groupID: nil,
                                             receivable: dklsPresignTags)
        machine.presignOnly = true
        return ProtocolRun(machine)
    }

    /// Export (`dkls23.md` §16) at the receiver, the app (party 0): every party in `participants` (E)
    /// sends its share encrypted to the one-time key's public half; the app opens them, checks each
    /// against its public share, interpolates and checks x·G = P.
    package static func exportReceiving(keyshare: Keyshare, participants: [PartyIndex], oneTimeKey: X25519.PrivateKey,
                                       instanceID: InstanceID, setupHash: SetupHash) throws(ProtocolError) -> ProtocolRun<ExportedKey> {
        ProtocolRun(try exportMachine(keyshare: keyshare, participants: participants, receiverKey: oneTimeKey.publicKey,
                                      oneTimeKey: oneTimeKey, instanceID: instanceID, setupHash: setupHash))
    }

    /// Export (`dkls23.md` §16) at an exporter (a node): its share, encrypted to the app's one-time key
    /// `receiverKey`, goes out in the first round and the run ends.
    package static func exportSending(keyshare: Keyshare, participants: [PartyIndex], receiverKey: X25519.PublicKey,
                                     instanceID: InstanceID, setupHash: SetupHash) throws(ProtocolError) -> ProtocolRun<ExportShareSent> {
        ProtocolRun(try exportMachine(keyshare: keyshare, participants: participants, receiverKey: receiverKey,
                                      oneTimeKey: nil, instanceID: instanceID, setupHash: setupHash))
    }

    private static func exportMachine(keyshare: Keyshare, participants: [PartyIndex], receiverKey: X25519.PublicKey,
                                      oneTimeKey: X25519.PrivateKey?, instanceID: InstanceID,
                                      setupHash: SetupHash) throws(ProtocolError) -> SessionProtocolMachine {
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            let parameters = try DKLsExport.Parameters(keyshare: share, exporters: participants, receiver: 0,
                                                       receiverKey: receiverKey, instanceId: instanceID.bytes, setupHash: setupHash.bytes)
            return SessionProtocolMachine(local: share.partyIndex, participants: participants,
                                          state: .dklsExport(parameters, oneTimeKey), mode: keyshare.mode, groupID: nil,
                                          receivable: [DKLsTag.exportShare])
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            let parameters = try FROST.Export.Sealed.Parameters(keyshare: share, exporters: participants, receiver: 0,
                                                                receiverKey: receiverKey, instanceId: instanceID.bytes,
                                                                setupHash: setupHash.bytes)
            return SessionProtocolMachine(local: share.party, participants: participants,
                                          state: .frostExport(parameters, oneTimeKey), mode: keyshare.mode, groupID: nil,
                                          receivable: [FROST.MessageTag.exportShare.rawValue])
        }
    }

    /// FROST presigning (`docs/protocol/session.md` §5.2 "FROST preSign"): round 1 only — fresh nonces, the
    /// commitments broadcast; ends with the presignature once the co-signer's commitments arrived.
    package static func frostPresign(keyshare: FROST.Keyshare, signers: [PartyIndex],
                                    using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<SessionPresignature> {
        guard signers.count == 2, signers.contains(keyshare.party) else { throw .invalidInput(.invalidParameters) }
        let presignature = FROST.Presignature(keyshare: keyshare, using: &rng)
        return ProtocolRun(SessionProtocolMachine(local: keyshare.party, participants: signers, state: .frostPresign(presignature),
                                                  mode: nil, groupID: nil, receivable: [FROST.MessageTag.signRound1.rawValue]))
    }

    /// FROST keygen (`threshold`-of-`partyCount`) or refresh of `current`.
    package static func frostDKG(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                mode: Keyshare.Mode, groupID: [UInt8]?, refreshing current: FROST.Keyshare? = nil,
                                using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let keygenMode: FROST.KeygenMode = current.map { .refresh($0) } ?? .keygen
        guard let t = UInt8(exactly: threshold), let n = UInt8(exactly: partyCount) else { throw .invalidInput(.invalidParameters) }
        let machine = try FROST.KeyGeneration(party: local, threshold: t, parties: n, sessionId: instanceID.bytes, mode: keygenMode,
                                              using: &rng)
        return ProtocolRun(SessionProtocolMachine(local: local, participants: (0..<partyCount).map { PartyIndex($0) },
                                                  state: .frostDKG(machine, round: 0), mode: mode, groupID: groupID,
                                                  receivable: frostDKGTags))
    }

    /// FROST signing of `message` by `signers` along a soft `path`.
    package static func frostSign(keyshare: FROST.Keyshare, signers: [PartyIndex], message: [UInt8], path: [UInt32],
                                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<SessionSignature> {
        let presignature = FROST.Presignature(keyshare: keyshare, using: &rng)
        let session = try FROST.SigningSession(keyshare: keyshare, signers: signers, message: message, path: path,
                                               presignature: presignature)
        return ProtocolRun(SessionProtocolMachine(local: keyshare.party, participants: signers,
                                                  state: .frostSign(session, round: 0), mode: nil, groupID: nil,
                                                  receivable: frostSignTags))
    }

    /// Whether every step, `start()` included, is a fraction of a millisecond (FROST keygen and signing:
    /// a few Ed25519 operations; the round-1 message exists from the machine's creation). Such steps run
    /// where the caller is, and the app may run the first one before its SETUP goes out (session.md §5.2 flight F1).
    package var roundsAreShort: Bool {
        switch state {
        case .frostDKG, .frostSign, .frostPresign: return true
        default: return false
        }
    }

    /// The first round's messages.
    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        switch state {
        case .dklsDKGStart(let parameters):
            let (next, out) = try DKLsDKG.start(parameters, using: &rng)
            state = .dklsDKG1(next)
            awaiting = [DKLsTag.dkgRound1Broadcast, DKLsTag.dkgRound1Direct]
            return out
        case .dklsSignStart(let parameters):
            let (next, out) = try DKLsSign.start(parameters, using: &rng)
            state = .dklsSign1(next, parameters.keyshare)
            awaiting = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct]
            return out
        case .frostDKG(let machine, 0):
            state = .frostDKG(machine, round: 1)
            awaiting = [FROST.MessageTag.dkgRound1.rawValue]
            return [ProtocolMessage(tag: FROST.MessageTag.dkgRound1.rawValue, from: local, to: nil, payload: machine.round1Message)]
        case .dklsHardStart(let parameters):
            let (next, message) = try DKLsHardDerivation.start(parameters, using: &rng)
            state = .dklsHard(next)
            awaiting = [DKLsTag.hardDerivation]
            return [message]
        case .frostPresign(let presignature):
            awaiting = [FROST.MessageTag.signRound1.rawValue]
            return [ProtocolMessage(tag: FROST.MessageTag.signRound1.rawValue, from: local, to: nil,
                                    payload: presignature.round1Message)]
        case .frostSign(let session, 0):
            state = .frostSign(session, round: 1)
            awaiting = [FROST.MessageTag.signRound1.rawValue]
            return [ProtocolMessage(tag: FROST.MessageTag.signRound1.rawValue, from: local, to: nil, payload: session.round1Message)]
        case .frostRepairHelper(let helper, _):
            let others = helper.helpers.filter { $0 != local }
            awaiting = [FROST.MessageTag.repairStep1.rawValue]
            awaitingFrom = others
            return helper.step1Messages.sorted { $0.key < $1.key }.map {
                ProtocolMessage(tag: FROST.MessageTag.repairStep1.rawValue, from: local, to: $0.key, payload: $0.value)
            }
        case .frostRepairRecipient(_, let helpers, _):
            awaiting = [FROST.MessageTag.repairStep2.rawValue]
            awaitingFrom = helpers
            return []
        case .dklsExport(let parameters, let oneTimeKey):
            if local == parameters.receiver {
                guard oneTimeKey != nil else { throw .invalidInput(.invalidParameters) }
                awaiting = [DKLsTag.exportShare]
                return []
            }
            let message = try DKLsExport.exportShare(parameters, using: &rng)
            end(.exportShareSent)
            return [message]
        case .frostExport(let parameters, let oneTimeKey):
            if local == parameters.receiver {
                guard oneTimeKey != nil else { throw .invalidInput(.invalidParameters) }
                awaiting = [FROST.MessageTag.exportShare.rawValue]
                return []
            }
            let payload = try FROST.Export.Sealed.exportShare(parameters, using: &rng)
            end(.exportShareSent)
            return [ProtocolMessage(tag: FROST.MessageTag.exportShare.rawValue, from: local, to: parameters.receiver,
                                    payload: payload)]
        default:
            throw .invalidInput(.invalidParameters)
        }
    }

    /// Consumes every peer's messages for the current round (exactly one per awaited tag and peer)
    /// and returns this party's next messages (possibly none).
    package mutating func advance(_ messages: [ProtocolMessage],
                                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        let senders = awaitingSenders
        let expected = Set(awaiting.flatMap { tag in senders.map { TagFrom(tag: tag, from: $0) } })
        let received = messages.map { TagFrom(tag: $0.tag, from: $0.from) }
        guard Set(received) == expected, received.count == expected.count else { throw .invalidInput(.invalidParameters) }
        func payloads(_ tag: UInt16) -> [(PartyIndex, [UInt8])] {
            messages.filter { $0.tag == tag }.sorted { $0.from < $1.from }.map { ($0.from, $0.payload) }
        }
        switch state {
        case .dklsDKG1(let round1):
            let (next, out) = try round1.round2(messages, using: &rng)
            state = .dklsDKG2(next)
            awaiting = [DKLsTag.dkgRound2Broadcast, DKLsTag.dkgRound2Direct]
            return out
        case .dklsDKG2(let round2):
            let (next, out) = try round2.round3(messages, using: &rng)
            state = .dklsDKG3(next)
            awaiting = [DKLsTag.dkgRound3Broadcast]
            return out
        case .dklsDKG3(let round3):
            let keyshare = try round3.finish(messages)
            end(.keyshare(try wrapped { try Keyshare(dkls: keyshare, mode: $0, groupId: groupID) }))
            return []
        case .dklsHard(let hardState):
            let child = try hardState.finish(messages)
            end(.keyshare(try wrapped { try Keyshare(dkls: child, mode: $0, groupId: groupID) }))
            return []
        case .dklsSign1(let round1, let keyshare):
            let (next, out) = try round1.round2(messages, using: &rng)
            state = .dklsSign2(next, keyshare)
            awaiting = [DKLsTag.signRound2Direct]
            return out
        case .dklsSign2(let round2, let keyshare):
            let presignature = try round2.presignature(messages)
            if presignOnly {
                end(.presignature(.ecdsa(presignature)))
                return []
            }
            let (finishState, message) = try presignature.finish(messageHash: messageHash, keyshare: keyshare)
            state = .dklsSignFinish(finishState)
            awaiting = [DKLsTag.signFinish]
            return [message]
        case .dklsSignFinish(let finishState):
            end(.signature(.ecdsa(try finishState.combine(messages))))
            return []
        case .frostDKG(var machine, 1):
            for (from, payload) in payloads(FROST.MessageTag.dkgRound1.rawValue) { try machine.receiveRound1(payload, from: from) }
            let direct = try machine.round2Messages()
            state = .frostDKG(machine, round: 2)
            awaiting = [FROST.MessageTag.dkgRound2.rawValue]
            return direct.sorted { $0.key < $1.key }.map {
                ProtocolMessage(tag: FROST.MessageTag.dkgRound2.rawValue, from: local, to: $0.key, payload: $0.value)
            }
        case .frostDKG(var machine, 2):
            for (from, payload) in payloads(FROST.MessageTag.dkgRound2.rawValue) { try machine.receiveRound2(payload, from: from) }
            let keyshare = try machine.finish()
            end(.keyshare(try wrapped { try Keyshare(frost: keyshare, mode: $0, groupId: groupID) }))
            return []
        case .dklsExport(let parameters, let oneTimeKey?):
            let root = try DKLsExport.receive(parameters, privateKey: oneTimeKey, messages: messages)
            let keyshare = parameters.keyshare
            guard let publicKey = try? keyshare.publicKey.compressed(),
                  let key = try? ExportedKey(algorithm: .ecdsa, privateKey: Data(root.privateKey.bytes),
                                             chainCode: Data(root.chainCode), publicKey: Data(publicKey),
                                             keyId: Hex.encode(keyshare.keyId))
            else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            end(.exportedKey(key))
            return []
        case .frostExport(let parameters, let oneTimeKey?):
            var sealed: [PartyIndex: [UInt8]] = [:]
            for (from, payload) in payloads(FROST.MessageTag.exportShare.rawValue) { sealed[from] = payload }
            let root = try FROST.Export.Sealed.receive(parameters, privateKey: oneTimeKey, messages: sealed)
            let keyshare = parameters.keyshare
            guard let key = try? ExportedKey(algorithm: .eddsa, privateKey: Data(root.bytes),
                                             chainCode: Data(keyshare.chainCode), publicKey: Data(keyshare.publicKey.bytes),
                                             keyId: Hex.encode(keyshare.keyId))
            else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            end(.exportedKey(key))
            return []
        case .frostRepairHelper(var helper, let instanceID):
            for (from, payload) in payloads(FROST.MessageTag.repairStep1.rawValue) { try helper.receiveStep1(payload, from: from) }
            let sigma = try helper.step2Message()
            let refresh = try FROST.KeyGeneration(party: local, threshold: helper.keyshare.threshold,
                                                  parties: helper.keyshare.parties, sessionId: instanceID.bytes,
                                                  mode: .refresh(helper.keyshare), using: &rng)
            state = .frostDKG(refresh, round: 1)
            awaiting = [FROST.MessageTag.dkgRound1.rawValue]
            awaitingFrom = nil
            return [ProtocolMessage(tag: FROST.MessageTag.repairStep2.rawValue, from: local, to: helper.lost,
                                    payload: sigma + Self.frostPKI(helper.keyshare)),
                    ProtocolMessage(tag: FROST.MessageTag.dkgRound1.rawValue, from: local, to: nil, payload: refresh.round1Message)]
        case .frostRepairRecipient(let expected, let helpers, let instanceID):
            let received = payloads(FROST.MessageTag.repairStep2.rawValue)
            // Every holder's PKI must be byte-identical (a lying holder cannot substitute a key). Two
            // differing copies cannot tell which holder lied, so nobody is named.
            for (from, payload) in received where payload.count <= 32 { throw .abort(party: from, reason: .malformedMessage) }
            guard let first = received.first else { throw .abort(party: nil, reason: .missingMessages) }
            let pki = Array(first.1[32...])
            guard received.allSatisfy({ Array($0.1[32...]) == pki }) else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            let template = try Self.decodeFROSTPKI(pki, from: first.0)
            guard template.publicKey == expected, Int(template.parties) == peers.count + 1 else {
                throw .abort(party: nil, reason: .publicKeyMismatch)
            }
            var recipient = try FROST.RepairRecipient(party: local, helpers: helpers, threshold: template.threshold,
                                                      parties: template.parties, publicKey: template.publicKey,
                                                      generation: template.generation, chainCode: template.chainCode,
                                                      verifyingShares: template.verifyingShares)
            for (from, payload) in received { try recipient.receiveStep2(Array(payload[0..<32]), from: from) }
            let repaired = try recipient.finish()
            let refresh = try FROST.KeyGeneration(party: local, threshold: repaired.threshold, parties: repaired.parties,
                                                  sessionId: instanceID.bytes, mode: .refresh(repaired), using: &rng)
            state = .frostDKG(refresh, round: 1)
            awaiting = [FROST.MessageTag.dkgRound1.rawValue]
            awaitingFrom = nil
            return [ProtocolMessage(tag: FROST.MessageTag.dkgRound1.rawValue, from: local, to: nil, payload: refresh.round1Message)]
        case .frostPresign(let presignature):
            guard let (peer, payload) = payloads(FROST.MessageTag.signRound1.rawValue).first, payload.count == 64 else {
                throw .abort(party: peers.first, reason: .malformedMessage)
            }
            // The commitments must decode as valid points now (checked again at the final).
            guard (try? FROST.Point(bytes: Array(payload[0..<32]))) != nil, (try? FROST.Point(bytes: Array(payload[32...]))) != nil
            else { throw .abort(party: peer, reason: .malformedMessage) }
            end(.presignature(.eddsa(FROSTPresignatureShare(presignature: presignature, peer: peer, peerRound1: payload))))
            return []
        case .frostSign(var session, 1):
            for (from, payload) in payloads(FROST.MessageTag.signRound1.rawValue) { try session.receiveRound1(payload, from: from) }
            let share = try session.round2()
            state = .frostSign(session, round: 2)
            awaiting = [FROST.MessageTag.signRound2.rawValue]
            return [ProtocolMessage(tag: FROST.MessageTag.signRound2.rawValue, from: local, to: nil, payload: share)]
        case .frostSign(var session, 2):
            for (from, payload) in payloads(FROST.MessageTag.signRound2.rawValue) { try session.receiveRound2(payload, from: from) }
            // `signature()` returns only a signature that libsodium verified (RFC 8032, strict) under
            // the derived key, so nobody sees an invalid one.
            let signature = try session.signature()
            end(.signature(.eddsa(signature)))
            return []
        default:
            throw .invalidInput(.invalidParameters)
        }
    }

    private struct TagFrom: Hashable {
        let tag: UInt16
        let from: PartyIndex
    }

    private struct FROSTPKI {
        var threshold: UInt8
        var parties: UInt8
        var publicKey: FROST.Point
        var generation: [UInt8]
        var chainCode: [UInt8]
        var verifyingShares: [FROST.Point]
    }

    /// Decodes `frostPKI` bytes from `sender`; any malformation is that sender's abort.
    private static func decodeFROSTPKI(_ bytes: [UInt8], from sender: PartyIndex) throws(ProtocolError) -> FROSTPKI {
        let bad = ProtocolError.abort(party: sender, reason: .malformedMessage)
        guard bytes.count >= 35 else { throw bad }
        let t = bytes[0], n = bytes[1]
        let genLength = Int(bytes[34])
        guard n >= 2, n <= 16, t >= 1, t <= n, bytes.count == 35 + genLength + 32 + 32 * Int(n) else { throw bad }
        guard let publicKey = try? FROST.Point(bytes: Array(bytes[2..<34])) else { throw bad }
        var offset = 35
        let generation = Array(bytes[offset..<(offset + genLength)])
        offset += genLength
        let chainCode = Array(bytes[offset..<(offset + 32)])
        offset += 32
        var shares: [FROST.Point] = []
        for _ in 0..<Int(n) {
            guard let y = try? FROST.Point(bytes: Array(bytes[offset..<(offset + 32)])) else { throw bad }
            shares.append(y)
            offset += 32
        }
        return FROSTPKI(threshold: t, parties: n, publicKey: publicKey, generation: generation, chainCode: chainCode,
                        verifyingShares: shares)
    }

    private mutating func end(_ outcome: ProtocolOutcome) {
        state = .finished
        awaiting = []
        self.outcome = outcome
    }

    /// Wraps a keyshare a run produced with the run's mode and group (none for a run that ends in no keyshare).
    private func wrapped(_ make: (Keyshare.Mode) throws -> Keyshare) throws(ProtocolError) -> Keyshare {
        guard let keyshareMode, let keyshare = try? make(keyshareMode) else { throw .abort(party: nil, reason: .publicKeyMismatch) }
        return keyshare
    }
}

extension SessionProtocolMachine: CustomStringConvertible {
    /// No secrets: the party, its peers and what it waits for.
    package var description: String { "SessionProtocolMachine(party \(local), peers \(peers), awaiting \(awaiting.sorted()))" }
}
