import Foundation
import MPCCrypto
import MPCProtocols

/// One party's side of a two-party protocol run (DKLs23 or FROST) as a round machine: `start()` gives
/// the first messages; then, whenever every tag in `awaiting` has arrived from the peer, `advance`
/// consumes them and gives the next messages; `result` is set after the last round.
///
/// A value type; secrets live in the protocol states (which redact their descriptions). Used by the
/// app's `DuoSession` and the node's `DuoStepRunner` alike.
package struct DuoProtocolMachine: Sendable {
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
        case finished
    }

    /// This party's index.
    package let local: PartyIndex
    /// The other participant.
    package let peer: PartyIndex
    private let messageHash: [UInt8]
    private let keyshareMode: Keyshare.Mode
    private var state: State
    /// Protocol tags that must all arrive from the peer before the next `advance`; empty when done.
    package private(set) var awaiting: Set<UInt16> = []
    /// Every tag this run may receive (for the frame state check, §3.5 step 3).
    package let receivableTags: Set<UInt16>
    /// The outcome, once the run finished.
    package private(set) var result: ProtocolResult?

    private init(local: PartyIndex, state: State, messageHash: [UInt8] = [], receivable: Set<UInt16>) {
        self.local = local
        peer = local == 0 ? 1 : 0
        self.state = state
        self.messageHash = messageHash
        keyshareMode = .duo
        receivableTags = receivable
    }

    private static let dklsDKGTags: Set<UInt16> = [DKLsTag.dkgRound1Broadcast, DKLsTag.dkgRound1Direct,
                                                   DKLsTag.dkgRound2Broadcast, DKLsTag.dkgRound2Direct,
                                                   DKLsTag.dkgRound3Broadcast]
    private static let dklsSignTags: Set<UInt16> = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct,
                                                    DKLsTag.signRound2Direct, DKLsTag.signFinish]
    private static let frostDKGTags: Set<UInt16> = [FROST.MessageTag.dkgRound1.rawValue, FROST.MessageTag.dkgRound2.rawValue]
    private static let frostSignTags: Set<UInt16> = [FROST.MessageTag.signRound1.rawValue, FROST.MessageTag.signRound2.rawValue]

    /// DKLs23 keygen (duo 2-of-2) or refresh (`current` = this party's keyshare).
    package static func dklsDKG(local: PartyIndex, instanceID: [UInt8], setupHash: [UInt8],
                               refreshing current: DKLsKeyshare? = nil) throws(ProtocolError) -> DuoProtocolMachine {
        let mode: DKLsDKG.Mode
        if let current {
            mode = .refresh(holders: [0, 1], keyshare: current, expectedPublicKey: current.publicKey)
        } else {
            mode = .keygen
        }
        let parameters = try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: local, instanceId: instanceID,
                                                setupHash: setupHash, mode: mode)
        return DuoProtocolMachine(local: local, state: .dklsDKGStart(parameters), receivable: dklsDKGTags)
    }

    /// DKLs23 import (duo; the app, party 0, is the importer and alone passes the private key).
    package static func dklsImport(local: PartyIndex, instanceID: [UInt8], setupHash: [UInt8], publicKey: Secp256k1.Point,
                                  chainCode: [UInt8], privateKey: Secp256k1.Scalar?) throws(ProtocolError) -> DuoProtocolMachine {
        let parameters = try DKLsDKG.Parameters(partyCount: 2, threshold: 2, partyIndex: local, instanceId: instanceID,
                                                setupHash: setupHash,
                                                mode: .importKey(importer: 0, publicKey: publicKey, chainCode: chainCode,
                                                                 privateKey: privateKey))
        return DuoProtocolMachine(local: local, state: .dklsDKGStart(parameters), receivable: dklsDKGTags)
    }

    /// FROST import (duo; the app, party 0, is the importer and alone passes the secret scalar).
    package static func frostImport(local: PartyIndex, instanceID: [UInt8], publicKey: FROST.Point, chainCode: [UInt8],
                                   secret: FROST.Scalar?) throws(ProtocolError) -> DuoProtocolMachine {
        var rng = SecureRandom()
        let key = try FROST.ImportedKey(importer: 0, publicKey: publicKey, chainCode: chainCode, secret: secret)
        let machine = try FROST.KeyGeneration(party: local, threshold: 2, parties: 2, sessionId: instanceID,
                                              mode: .importKey(key), using: &rng)
        return DuoProtocolMachine(local: local, state: .frostDKG(machine, round: 0), receivable: frostDKGTags)
    }

    /// DKLs23 signing of a 32-byte hash by {0, 1} along a soft `path`.
    package static func dklsSign(keyshare: DKLsKeyshare, instanceID: [UInt8], setupHash: [UInt8], path: DerivationPath,
                                messageHash: [UInt8]) throws(ProtocolError) -> DuoProtocolMachine {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidParameters) }
        let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: [0, 1], instanceId: instanceID,
                                                 setupHash: setupHash, path: path)
        return DuoProtocolMachine(local: keyshare.partyIndex, state: .dklsSignStart(parameters), messageHash: messageHash,
                                  receivable: dklsSignTags)
    }

    /// FROST keygen (2-of-2) or refresh of `current`.
    package static func frostDKG(local: PartyIndex, instanceID: [UInt8],
                                refreshing current: FROST.Keyshare? = nil) throws(ProtocolError) -> DuoProtocolMachine {
        var rng = SecureRandom()
        let mode: FROST.KeygenMode = current.map { .refresh($0) } ?? .keygen
        let machine = try FROST.KeyGeneration(party: local, threshold: 2, parties: 2, sessionId: instanceID, mode: mode,
                                              using: &rng)
        return DuoProtocolMachine(local: local, state: .frostDKG(machine, round: 0), receivable: frostDKGTags)
    }

    /// FROST signing of `message` by {0, 1} along a soft `path`.
    package static func frostSign(keyshare: FROST.Keyshare, message: [UInt8], path: [UInt32]) throws(ProtocolError) -> DuoProtocolMachine {
        var rng = SecureRandom()
        let presignature = FROST.Presignature(keyshare: keyshare, using: &rng)
        let session = try FROST.SigningSession(keyshare: keyshare, signers: [0, 1], message: message, path: path,
                                               presignature: presignature)
        return DuoProtocolMachine(local: keyshare.party, state: .frostSign(session, round: 0), receivable: frostSignTags)
    }

    /// Whether every step, `start()` included, is a fraction of a millisecond (FROST: a few Ed25519
    /// operations; its round-1 message exists from the machine's creation). Such steps run where the
    /// caller is, and the app runs the first one before its SETUP goes out (§5.2 flight F1).
    package var roundsAreShort: Bool {
        switch state {
        case .frostDKG, .frostSign: return true
        default: return false
        }
    }

    /// The first round's messages.
    package mutating func start() throws(ProtocolError) -> [ProtocolMessage] {
        var rng = SecureRandom()
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
        case .frostSign(let session, 0):
            state = .frostSign(session, round: 1)
            awaiting = [FROST.MessageTag.signRound1.rawValue]
            return [ProtocolMessage(tag: FROST.MessageTag.signRound1.rawValue, from: local, to: nil, payload: session.round1Message)]
        default:
            throw .invalidInput(.invalidParameters)
        }
    }

    /// Consumes the peer's messages for the current round (exactly the `awaiting` tags) and returns this
    /// party's next messages (possibly none).
    package mutating func advance(_ messages: [ProtocolMessage]) throws(ProtocolError) -> [ProtocolMessage] {
        guard Set(messages.map(\.tag)) == awaiting, messages.count == awaiting.count,
              messages.allSatisfy({ $0.from == peer })
        else { throw .invalidInput(.invalidParameters) }
        var rng = SecureRandom()
        func payload(_ tag: UInt16) -> [UInt8] { messages.first { $0.tag == tag }?.payload ?? [] }
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
            guard let wrapped = try? Keyshare(dkls: keyshare, mode: keyshareMode) else { throw .abort(party: nil, reason: .publicKeyMismatch) }
            finish(.keyshare(wrapped))
            return []
        case .dklsSign1(let round1, let keyshare):
            let (next, out) = try round1.round2(messages, using: &rng)
            state = .dklsSign2(next, keyshare)
            awaiting = [DKLsTag.signRound2Direct]
            return out
        case .dklsSign2(let round2, let keyshare):
            let presignature = try round2.presignature(messages)
            let (finishState, message) = try presignature.finish(messageHash: messageHash, keyshare: keyshare)
            state = .dklsSignFinish(finishState)
            awaiting = [DKLsTag.signFinish]
            return [message]
        case .dklsSignFinish(let finishState):
            finish(.ecdsaSignature(try finishState.combine(messages)))
            return []
        case .frostDKG(var machine, 1):
            try machine.receiveRound1(payload(FROST.MessageTag.dkgRound1.rawValue), from: peer)
            let direct = try machine.round2Messages()
            state = .frostDKG(machine, round: 2)
            awaiting = [FROST.MessageTag.dkgRound2.rawValue]
            return direct.sorted { $0.key < $1.key }.map {
                ProtocolMessage(tag: FROST.MessageTag.dkgRound2.rawValue, from: local, to: $0.key, payload: $0.value)
            }
        case .frostDKG(var machine, 2):
            try machine.receiveRound2(payload(FROST.MessageTag.dkgRound2.rawValue), from: peer)
            finish(.keyshare(Keyshare(frost: try machine.finish(), mode: keyshareMode)))
            return []
        case .frostSign(var session, 1):
            try session.receiveRound1(payload(FROST.MessageTag.signRound1.rawValue), from: peer)
            let share = try session.round2()
            state = .frostSign(session, round: 2)
            awaiting = [FROST.MessageTag.signRound2.rawValue]
            return [ProtocolMessage(tag: FROST.MessageTag.signRound2.rawValue, from: local, to: nil, payload: share)]
        case .frostSign(var session, 2):
            try session.receiveRound2(payload(FROST.MessageTag.signRound2.rawValue), from: peer)
            // `signature()` returns only a signature that libsodium verified (RFC 8032, strict) under
            // the derived key, so nobody sees an invalid one.
            let signature = try session.signature()
            finish(.eddsaSignature(signature))
            return []
        default:
            throw .invalidInput(.invalidParameters)
        }
    }

    private mutating func finish(_ outcome: ProtocolResult) {
        state = .finished
        awaiting = []
        result = outcome
    }
}

extension DuoProtocolMachine: CustomStringConvertible {
    /// No secrets: the party and what it waits for.
    package var description: String { "DuoProtocolMachine(party \(local), awaiting \(awaiting.sorted()))" }
}
